// Peer tests: vLLM's own tests of the CUDA-graph capture sizes (vllm-project/vllm at 8e958902),
// against core/engine/settings.cpp. Each test names the upstream test and parameter row it encodes;
// the expected values are that row's numbers. docs/peer-suite.md lists the rows headroom does not
// model (sequence parallelism, Blackwell's default, the model runner V2, the validation errors).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "core/engine/settings.hpp"

namespace headroom {
namespace {

// The engine of test_cudagraph_sizes_post_init: max_num_seqs = min(max_num_batched_tokens, 128),
// FULL_AND_PIECEWISE unless a row says otherwise; no speculative tokens.
engine_settings post_init_engine(int64_t max_num_batched_tokens) {
  engine_settings s;
  s.max_num_batched_tokens = max_num_batched_tokens;
  s.max_num_seqs = std::min<int64_t>(max_num_batched_tokens, 128);
  s.cg_mode = cudagraph_mode::full_and_piecewise;
  return s;
}

// tests/compile/test_config.py::test_cudagraph_sizes_post_init, row (None, None, 1, False, 2048,
// FULL_AND_PIECEWISE, 256): the default largest size min(128 * 1 * 2, 512) = 256.
TEST(VllmCaptureSizes, DefaultMaxFromMaxNumSeqs) { EXPECT_EQ(max_capture_of(post_init_engine(2048)), 256); }

// test_cudagraph_sizes_post_init, row ([1, 2, 4], 4, ...): a given list and a consistent maximum.
TEST(VllmCaptureSizes, GivenListWithItsMax) {
  engine_settings s = post_init_engine(2048);
  s.capture_sizes = {1, 2, 4};
  s.max_capture_size = 4;
  EXPECT_EQ(max_capture_of(s), 4);
}

// test_cudagraph_sizes_post_init, row ([1, 256], None, ...): the maximum is the list's last size.
TEST(VllmCaptureSizes, GivenListSetsTheMax) {
  engine_settings s = post_init_engine(2048);
  s.capture_sizes = {1, 256};
  EXPECT_EQ(max_capture_of(s), 256);
}

// test_cudagraph_sizes_post_init, rows ([], None, ..., NONE, 0) and (None, 0, ..., NONE, 0): no
// graphs, no capture size.
TEST(VllmCaptureSizes, ModeNoneCapturesNothing) {
  engine_settings s = post_init_engine(2048);
  s.cg_mode = cudagraph_mode::none;
  EXPECT_EQ(max_capture_of(s), 0);
  EXPECT_TRUE(capture_sizes_of(s).empty());
}

// test_cudagraph_sizes_post_init, row (None, 257, ..., 2048, ..., 256): a maximum off the 16-stride
// is truncated to the last stride step, 256 (2048 tokens are above it, so not added).
TEST(VllmCaptureSizes, OffStrideMaxTruncatedToStride) {
  engine_settings s = post_init_engine(2048);
  s.max_capture_size = 257;
  EXPECT_EQ(max_capture_of(s), 256);
}

// test_cudagraph_sizes_post_init, row (None, 2048, ..., 257, ..., 257): max_num_batched_tokens at
// or below the maximum is captured although 257 is off the stride.
TEST(VllmCaptureSizes, MaxNumBatchedTokensIsCaptured) {
  engine_settings s = post_init_engine(257);
  s.max_capture_size = 2048;
  EXPECT_EQ(max_capture_of(s), 257);
}

// test_cudagraph_sizes_post_init, row ([1, 2, 4, 15], None, 1, False, 2048, ..., 15).
TEST(VllmCaptureSizes, MaxFromAnOffStrideList) {
  engine_settings s = post_init_engine(2048);
  s.capture_sizes = {1, 2, 4, 15};
  EXPECT_EQ(max_capture_of(s), 15);
}

// test_cudagraph_sizes_post_init, row ([1, 2, 4, 15], None, 1, False, 8, ..., 4): sizes above
// max_num_batched_tokens are dropped from a given list.
TEST(VllmCaptureSizes, GivenListLimitedByMaxNumBatchedTokens) {
  engine_settings s = post_init_engine(8);
  s.capture_sizes = {1, 2, 4, 15};
  EXPECT_EQ(max_capture_of(s), 4);
  EXPECT_EQ(capture_sizes_of(s), (std::vector<int64_t>{1, 2, 4}));
}

// tests/compile/test_config.py::test_blackwell_cudagraph_default[False-512]: max_num_seqs 512,
// max_num_batched_tokens 2048, off Blackwell: min(512 * 2, 512) = 512.
TEST(VllmCaptureSizes, DefaultMaxCappedAt512) {
  engine_settings s;
  s.max_num_seqs = 512;
  s.max_num_batched_tokens = 2048;
  s.max_model_len = 2048;
  s.cg_mode = cudagraph_mode::full_and_piecewise;
  EXPECT_EQ(max_capture_of(s), 512);
}

// tests/test_config.py::test_resolve_cudagraph_mode_adjusts_spec_decode_sizes_only_for_v1[False-
// expected_capture_sizes0]: sizes 1..16 with a uniform decode query of 4 tokens (3 speculative),
// FULL_AND_PIECEWISE, model runner V1: rounded up to multiples of 4 -> [4, 8, 12, 16].
TEST(VllmCaptureSizes, SpecDecodeRoundsToWholeVerifyPasses) {
  engine_settings s;
  s.capture_sizes.resize(16);
  std::iota(s.capture_sizes.begin(), s.capture_sizes.end(), 1);
  s.max_capture_size = 16;
  s.num_speculative_tokens = 3;
  s.cg_mode = cudagraph_mode::full_and_piecewise;
  EXPECT_EQ(capture_sizes_of(s), (std::vector<int64_t>{4, 8, 12, 16}));
}

// tests/compile/test_config.py::test_compile_sizes_padding_validation, its comment on sizes
// [1, 2, 4, 8]: 1 -> 1, 2 -> 2, 3 -> 4, 4 -> 4, 5 -> 8 (FULL graphs).
TEST(VllmCaptureSizes, PaddedToTheNextCaptureSize) {
  engine_settings s;
  s.capture_sizes = {1, 2, 4, 8};
  s.max_capture_size = 8;
  s.max_num_seqs = 8;
  s.cg_mode = cudagraph_mode::full;
  const std::vector<std::pair<int64_t, int64_t>> want = {{1, 1}, {2, 2}, {3, 4}, {4, 4}, {5, 8}};
  for (const auto& [n, padded] : want) EXPECT_EQ(padded_graph_size(s, n), padded) << n << " tokens";
}

}  // namespace
}  // namespace headroom
