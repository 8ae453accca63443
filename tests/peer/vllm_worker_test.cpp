// Peer tests: vLLM's worker tests (vllm-project/vllm at 8e958902) of the block table's width and of
// the speculative-decoding draft passes' sequence lengths, against core/engine/steps.cpp and
// core/engine/mamba_group.cpp.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "core/engine/mamba_group.hpp"
#include "core/engine/steps.hpp"

namespace headroom {
namespace {

// tests/v1/worker/test_gpu_model_runner.py::test_get_block_table_width_aligns_to_128_tokens:
// 1875 blocks of 64 tokens round up to a multiple of 128 / 64 = 2 blocks: 1876.
TEST(VllmBlockTable, WidthAlignsTo128Tokens) {
  engine_settings s;
  s.max_model_len = 1875 * 64;  // cdiv(max_model_len, 64) = 1875 blocks
  EXPECT_EQ(block_table_width(s, 64), 1876);
}

// tests/v1/worker/test_gpu_model_runner.py::test_get_block_table_width_splits_virtual_blocks:
// 235 blocks of 256 tokens (already 128-token aligned) split into kernel blocks of 64: 940. headroom
// has no kernel block size (docs/peer-suite.md): its width is in cache blocks, 235 = 940 / (256 / 64).
TEST(VllmBlockTable, WidthInCacheBlocksBeforeTheKernelSplit) {
  engine_settings s;
  s.max_model_len = 235 * 256;
  EXPECT_EQ(block_table_width(s, 256) * (256 / 64), 940);
}

// tests/v1/worker/test_gpu_model_runner.py::test_mamba_state_table_width_is_not_aligned: a Mamba
// group of block size 39664 and one block per request keeps width 1 (not 8, the 128-token
// alignment of 39664-token blocks).
TEST(VllmBlockTable, MambaWidthIsNotAligned) {
  model_geometry m;
  m.layers.push_back({"model.layers.0.mixer", attn_kind::none, 0, 0, 0, 0, 0, 0, true});
  engine_settings s;
  s.max_model_len = 39664;
  s.mamba_block_size = 39664;
  const auto g = make_mamba_group(m, s, 16);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->table_width, 1);
}

// Draft pass `pass` of an eager engine with k speculative tokens and max_model_len 1024, after a
// verify batch of the given sequence lengths (1 + k query tokens each).
engine_step draft_pass_after(std::vector<int64_t> seq_lens, int64_t k, int64_t pass) {
  engine_settings s;
  s.num_speculative_tokens = k;
  s.max_model_len = 1024;
  s.cg_mode = cudagraph_mode::none;
  batch verify;
  verify.query_lens.assign(seq_lens.size(), 1 + k);
  verify.seq_lens = std::move(seq_lens);
  return realise_step(s, {step_kind::draft, 0, false, pass}, verify, {});
}

// tests/v1/spec_decode/test_eagle_draft_attn_metadata.py::
// test_build_draft_attn_metadata_sets_seq_lens_cpu_upper_bound: at draft step 2 the bound is the
// target's plus 2: [100, 200, 300] -> [102, 202, 302]. Upstream's step s (model runner V2,
// steps 1 .. k-1) is headroom's draft pass s + 1 (the V1 proposer's passes 2 .. k); one query token
// per request, query_start [0, 1, 2, 3].
TEST(VllmDraftPasses, SeqLensGrowByTheStep) {
  const engine_step st = draft_pass_after({100, 200, 300}, 3, 3);
  EXPECT_EQ(st.b.seq_lens, (std::vector<int64_t>{102, 202, 302}));
  EXPECT_EQ(st.query_start, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(st.max_query_len, 1);
}

// test_eagle_draft_attn_metadata.py::test_build_draft_attn_metadata_clamps_to_max_model_len:
// max_model_len 1024, step 3: 1023 + 3 is clamped to 1024, 500 + 3 = 503.
TEST(VllmDraftPasses, SeqLensClampedToMaxModelLen) {
  const engine_step st = draft_pass_after({1023, 500}, 4, 4);
  EXPECT_EQ(st.b.seq_lens, (std::vector<int64_t>{1024, 503}));
}

}  // namespace
}  // namespace headroom
