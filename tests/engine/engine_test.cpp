// Engine mirror (docs/engines.md §1, 3): registry, KV-cache grouping, attention groups, head resolution.
#include <gtest/gtest.h>

#include "core/engine/engine.hpp"
#include "tests/support/laguna.hpp"

namespace headroom {
namespace {

struct laguna_engine {
  rank_geometry rg;
  registry reg;
  std::vector<kv_cache_group> kv;
  explicit laguna_engine(int64_t tp, bool hybrid = true)
      : rg(to_rank(testing::laguna_xs2(), tp)),
        reg(make_registry(rg)),
        kv(make_kv_cache_groups(reg, dtype::bf16, 16, hybrid)) {}
};

TEST(Registry, DuplicatePrefixIsAnError) {
  registry reg;
  rank_layer l{"a", attn_kind::full, 8, 8, 64, 64, 0};
  reg.add(l);
  EXPECT_THROW(reg.add(l), std::invalid_argument);
  EXPECT_EQ(reg.find("missing"), nullptr);
}

TEST(KvCacheGroups, LagunaHybridBalancesBuckets) {
  laguna_engine e(1);
  // 10 full + 30 sliding layers: groups of min(10, 30) = 10 layers; 1 full group, 3 sliding.
  ASSERT_EQ(e.kv.size(), 4u);
  EXPECT_EQ(e.kv[0].spec.sliding_window, 0);
  for (const auto& g : e.kv) EXPECT_EQ(g.layers.size(), 10u);
  // Sliding group j takes layers j, j+3, j+6, ... of its bucket.
  EXPECT_EQ(e.kv[1].layers[0], "model.layers.1.self_attn.attn");
  EXPECT_EQ(e.kv[1].layers[1], "model.layers.5.self_attn.attn");
  EXPECT_EQ(e.kv[2].layers[0], "model.layers.2.self_attn.attn");
}

TEST(KvCacheGroups, BalancesToMaxWhenCloseInSize) {
  registry reg;
  for (int i = 0; i < 5; ++i)
    reg.add({std::string("f").append(std::to_string(i)), attn_kind::full, 8, 8, 64, 64, 0});
  for (int i = 0; i < 7; ++i)
    reg.add({std::string("s").append(std::to_string(i)), attn_kind::sliding, 8, 8, 64, 64, 128});
  auto g = make_kv_cache_groups(reg, dtype::bf16, 16, true);  // 7 < 1.5 * 5: groups of 7
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].layers.size(), 5u);
  EXPECT_EQ(g[1].layers.size(), 7u);
}

// 4 full and 6 sliding layers: 6 is not below 1.5 x 4, so groups take min(4, 6) = 4 layers and the
// 6 sliding layers split into ceil(6 / 4) = 2 groups, layers {0, 2, 4} and {1, 3, 5}.
TEST(KvCacheGroups, SplitsTheLargerBucketAtOneAndAHalfTimesTheSmaller) {
  registry reg;
  for (int i = 0; i < 4; ++i)
    reg.add({std::string("f").append(std::to_string(i)), attn_kind::full, 8, 8, 64, 64, 0});
  for (int i = 0; i < 6; ++i)
    reg.add({std::string("s").append(std::to_string(i)), attn_kind::sliding, 8, 8, 64, 64, 128});
  auto g = make_kv_cache_groups(reg, dtype::bf16, 16, true);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].layers.size(), 4u);
  EXPECT_EQ(g[1].layers, (std::vector<std::string>{"s0", "s2", "s4"}));
  EXPECT_EQ(g[2].layers, (std::vector<std::string>{"s1", "s3", "s5"}));
}

TEST(KvCacheGroups, HybridOffPromotesSlidingToOneGroup) {
  laguna_engine e(1, false);
  ASSERT_EQ(e.kv.size(), 1u);
  EXPECT_EQ(e.kv[0].layers.size(), 40u);
  EXPECT_EQ(e.kv[0].spec.sliding_window, 0);
}

TEST(AttentionGroups, HeadsKeySplitsMixedHeads) {
  laguna_engine e(1, false);
  auto ag = make_attention_groups(e.kv, e.reg, backend::triton, grouping::heads);
  ASSERT_EQ(ag.size(), 2u);
  EXPECT_EQ(ag[0].layers.size(), 10u);
  EXPECT_EQ(ag[1].layers.size(), 30u);
  auto legacy = make_attention_groups(e.kv, e.reg, backend::triton, grouping::legacy);
  ASSERT_EQ(legacy.size(), 1u);
  EXPECT_EQ(legacy[0].builder_layers.size(), 40u);
  auto proposer = make_attention_groups(e.kv, e.reg, backend::triton, grouping::proposer);
  ASSERT_EQ(proposer.size(), 1u);
  EXPECT_EQ(proposer[0].builder_layers, std::vector<std::string>{"model.layers.0.self_attn.attn"});
}

TEST(ResolveHeads, PerLayerReadsTheGroup) {
  laguna_engine e(2);
  auto ag = make_attention_groups(e.kv, e.reg, backend::flashinfer, grouping::heads);
  EXPECT_EQ(resolve_heads(e.reg, ag[0].builder_layers, policy::per_layer, 24).builder_heads, 24);
  EXPECT_EQ(resolve_heads(e.reg, ag[1].builder_layers, policy::per_layer, 24).builder_heads, 32);
  EXPECT_EQ(resolve_heads(e.reg, ag[1].builder_layers, policy::model_wide, 24).builder_heads, 24);
}

TEST(ResolveHeads, DisagreementNamesHeadsAndLayers) {
  laguna_engine e(1, false);
  auto ag = make_attention_groups(e.kv, e.reg, backend::triton, grouping::legacy);
  auto r = resolve_heads(e.reg, ag[0].builder_layers, policy::per_layer, 48);
  EXPECT_TRUE(r.disagreement);
  EXPECT_NE(r.message.find("48, 64"), std::string::npos);
  EXPECT_NE(r.message.find("model.layers.1.self_attn.attn"), std::string::npos);
  EXPECT_EQ(resolve_heads(e.reg, ag[0].builder_layers, policy::max, 48).builder_heads, 64);
}

TEST(ResolveHeads, UnregisteredNamesFallBackToModelWide) {
  laguna_engine e(1);
  auto r = resolve_heads(e.reg, {"draft.layers.0.attn", "nope"}, policy::per_layer, 48);
  EXPECT_TRUE(r.fell_back);
  EXPECT_EQ(r.builder_heads, 48);
  auto none = resolve_heads(e.reg, {}, policy::max, 48);
  EXPECT_TRUE(none.fell_back);
  EXPECT_EQ(none.builder_heads, 48);
}

}  // namespace
}  // namespace headroom
