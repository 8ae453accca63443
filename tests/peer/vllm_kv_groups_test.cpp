// Peer tests: the KV-cache groups of vLLM's tests/v1/core/test_kv_cache_utils.py::
// test_get_kv_cache_config_one_worker (vllm-project/vllm at 8e958902) against
// core/engine/grouping.cpp, and the page sizes of its fp8 (uint8) spec tests (at 6adad087) against
// core/engine/registry.cpp. Upstream's layers are new_kv_cache_spec() (full attention) and
// new_sliding_window_spec(), one spec each apart from the attention type; the expected groups are
// the test's KVCacheGroupSpec lists. Its same-type, different-head-size case is a disagreement
// (docs/peer-suite.md).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/engine/engine.hpp"

namespace headroom {
namespace {

using names = std::vector<std::string>;

// Layers layer_1 .. layer_n: the first `full` full attention, the rest sliding (window 128).
registry kv_groups_registry(int full, int n) {
  registry reg;
  for (int i = 1; i <= n; ++i) {
    const bool is_full = i <= full;
    reg.add({"layer_" + std::to_string(i), is_full ? attn_kind::full : attn_kind::sliding, 8, 4, 64, 64,
             is_full ? 0 : 128});
  }
  return reg;
}

std::vector<names> kv_groups_layers(const registry& reg, bool hybrid) {
  std::vector<names> out;
  for (const auto& g : make_kv_cache_groups(reg, dtype::bf16, 16, hybrid)) out.push_back(g.layers);
  return out;
}

// "all layers are full attention -> single group" and "all layers are sliding window -> single
// group".
TEST(VllmKvCacheGroups, OneAttentionTypeIsOneGroup) {
  EXPECT_EQ(kv_groups_layers(kv_groups_registry(2, 2), true), (std::vector<names>{{"layer_1", "layer_2"}}));
  EXPECT_EQ(kv_groups_layers(kv_groups_registry(0, 2), true), (std::vector<names>{{"layer_1", "layer_2"}}));
}

// "full + sliding, but disable_hybrid_kv_cache_manager": one group of both layers, with a full
// attention spec.
TEST(VllmKvCacheGroups, HybridOffIsOneFullAttentionGroup) {
  const auto groups = make_kv_cache_groups(kv_groups_registry(1, 2), dtype::bf16, 16, false);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].layers, (names{"layer_1", "layer_2"}));
  EXPECT_EQ(groups[0].spec.sliding_window, 0);  // headroom's full attention
}

// "full + sliding, with hybrid_kv_cache_manager": one group per type.
TEST(VllmKvCacheGroups, OneFullOneSliding) {
  EXPECT_EQ(kv_groups_layers(kv_groups_registry(1, 2), true), (std::vector<names>{{"layer_1"}, {"layer_2"}}));
}

// "2 full + 4 sliding, 2 layers per group".
TEST(VllmKvCacheGroups, TwoFullFourSliding) {
  EXPECT_EQ(kv_groups_layers(kv_groups_registry(2, 6), true),
            (std::vector<names>{{"layer_1", "layer_2"}, {"layer_3", "layer_5"}, {"layer_4", "layer_6"}}));
}

// "3 full + 7 sliding, pad to 3 full + 9 sliding".
TEST(VllmKvCacheGroups, ThreeFullSevenSliding) {
  EXPECT_EQ(kv_groups_layers(kv_groups_registry(3, 10), true),
            (std::vector<names>{{"layer_1", "layer_2", "layer_3"},
                                {"layer_4", "layer_7", "layer_10"},
                                {"layer_5", "layer_8"},
                                {"layer_6", "layer_9"}}));
}

// "6 full + 5 sliding, pad to 6 full + 6 sliding" (gpt-oss with an EAGLE drafter).
TEST(VllmKvCacheGroups, SixFullFiveSliding) {
  EXPECT_EQ(kv_groups_layers(kv_groups_registry(6, 11), true),
            (std::vector<names>{{"layer_1", "layer_2", "layer_3", "layer_4", "layer_5", "layer_6"},
                                {"layer_7", "layer_8", "layer_9", "layer_10", "layer_11"}}));
}

// "Different hidden size and different type": full attention of head size 64 and sliding of 32
// are two groups (upstream also gives them different block sizes; headroom has one block size).
TEST(VllmKvCacheGroups, DifferentHeadSizeAndTypeIsTwoGroups) {
  registry reg;
  reg.add({"layer_1", attn_kind::full, 8, 4, 64, 64, 0});
  reg.add({"layer_2", attn_kind::sliding, 8, 4, 32, 32, 128});
  EXPECT_EQ(kv_groups_layers(reg, true), (std::vector<names>{{"layer_1"}, {"layer_2"}}));
}

// tests/v1/core/test_kv_cache_utils.py at 6adad087: the page of new_kv_cache_spec(), a
// FullAttentionSpec of block 16, 2 kv heads, head size 64 (head size v the same).
kv_spec page_test_spec(dtype model, kv_quant cache) {
  kv_spec s;
  s.num_kv_heads = 2;
  s.head_size = s.head_size_v = 64;
  s.kv_dtype = model;
  s.block_size = 16;
  s.quant = cache;
  return s;
}

// test_unpadded_page_size_without_quant_matches_real_page: the spec's default float32, no
// quantisation: page_size_bytes is real_page_size_bytes, 16 x 2 x (64 + 64) x 4 = 16384.
TEST(VllmKvCachePages, UnquantisedPageIsTheRealPage) {
  EXPECT_EQ(page_size_bytes(page_test_spec(dtype::fp32, kv_quant::none)), 16384);
}

// test_unpadded_page_size_includes_per_token_head_scales: the same spec with dtype torch.uint8
// (an fp8 cache's storage dtype). Its real_page_size_bytes is 16 x 2 x (64 + 64) x 1 = 4096,
// which is headroom's page for an fp8 cache whatever the model's dtype. Upstream's page adds the
// per-token-head fp32 scales, 2 x 16 x 2 x 4 = 256 bytes (4352): that mode is not modelled
// (docs/peer-suite.md), so only the real page is encoded.
TEST(VllmKvCachePages, Fp8PageIsTheRealPageOfOneByteElements) {
  for (dtype model : {dtype::bf16, dtype::fp16, dtype::fp32})
    for (kv_quant q : {kv_quant::fp8_e4m3, kv_quant::fp8_e5m2})
      EXPECT_EQ(page_size_bytes(page_test_spec(model, q)), 4096) << to_string(model) << " " << to_string(q);
}

}  // namespace
}  // namespace headroom
