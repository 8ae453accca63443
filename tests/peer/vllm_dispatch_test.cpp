// Peer tests: vLLM's CudagraphDispatcher tests (vllm-project/vllm at 8e958902,
// tests/v1/cudagraph/test_cudagraph_dispatch.py) against core/engine/steps.cpp's forward_step:
// which steps replay a FULL graph (whose attention metadata is padded) and which run eagerly.
// Upstream: capture sizes [1, 8], max_num_seqs 8, one query token per decode request.
#include <gtest/gtest.h>

#include "core/engine/steps.hpp"

namespace headroom {
namespace {

engine_settings dispatch_engine(cudagraph_mode m) {
  engine_settings s;
  s.cg_mode = m;
  s.capture_sizes = {1, 8};
  s.max_capture_size = 8;
  s.max_num_seqs = 8;
  return s;
}

batch dispatch_mixed_batch(int64_t reqs, int64_t tokens_each) {
  batch b;
  b.seq_lens.assign(static_cast<std::size_t>(reqs), 64);
  b.query_lens.assign(static_cast<std::size_t>(reqs), tokens_each);
  return b;
}

// The mixed batch of 8 tokens (2 requests of 4) and the uniform decode batch of 8 requests under
// one mode: the FULL graph each replays (0: eager) and its metadata rows.
void expect_dispatch(cudagraph_mode m, int64_t mixed_graph, int64_t mixed_rows, int64_t decode_graph,
                     int64_t decode_rows) {
  const engine_settings s = dispatch_engine(m);
  const engine_step mixed = forward_step(s, dispatch_mixed_batch(2, 4));
  EXPECT_EQ(mixed.graph_size, mixed_graph) << to_string(m);
  EXPECT_EQ(mixed.num_reqs_padded, mixed_rows) << to_string(m);
  const engine_step decode = forward_step(s, decode_batch(8, 64));
  EXPECT_EQ(decode.graph_size, decode_graph) << to_string(m);
  EXPECT_EQ(decode.num_reqs_padded, decode_rows) << to_string(m);
}

// TestCudagraphDispatcher::test_dispatcher[FULL-...-False], steps 1 and 2: under FULL a mixed batch
// of 8 tokens and a uniform decode batch of 8 both replay the FULL graph of 8 with num_reqs 8
// (min(8, max_num_seqs)).
TEST(VllmDispatch, FullReplaysMixedAndDecodeBatches) { expect_dispatch(cudagraph_mode::full, 8, 8, 8, 8); }

// test_dispatcher[FULL_DECODE_ONLY-...-False], steps 1 and 2: the mixed batch runs eagerly (mode
// NONE: no padded metadata), the uniform decode batch replays FULL with num_reqs 8.
TEST(VllmDispatch, FullDecodeOnlyGraphsUniformDecodeOnly) {
  expect_dispatch(cudagraph_mode::full_decode_only, 0, 2, 8, 8);
}

// test_dispatcher[PIECEWISE-...-False], steps 1 and 2: PIECEWISE keys only, so no FULL graph and
// no attention metadata built for a graph size: both batches keep their own rows (2 and 8).
TEST(VllmDispatch, PiecewiseBuildsNoGraphMetadata) { expect_dispatch(cudagraph_mode::piecewise, 0, 2, 0, 8); }

// test_dispatcher, step 3 ("No key match"), every mode: 15 tokens are above the largest capture
// size 8, so the step runs eagerly (NONE) and is not padded.
TEST(VllmDispatch, AboveTheLargestCaptureSizeRunsEagerly) {
  for (cudagraph_mode m :
       {cudagraph_mode::full, cudagraph_mode::full_decode_only, cudagraph_mode::piecewise}) {
    const engine_step st = forward_step(dispatch_engine(m), dispatch_mixed_batch(3, 5));
    EXPECT_EQ(st.graph_size, 0) << to_string(m);
    EXPECT_EQ(st.num_reqs_padded, 3) << to_string(m);
    EXPECT_EQ(st.q_rows, 15) << to_string(m);
  }
}

// test_capture_replay_bypass_logic (FULL, sizes [1, 2]): 1 and 2 tokens replay their own graphs,
// 3 tokens bypass (mode NONE).
TEST(VllmDispatch, CaptureReplayBypass) {
  engine_settings s = dispatch_engine(cudagraph_mode::full);
  s.capture_sizes = {1, 2};
  s.max_capture_size = 2;
  EXPECT_EQ(forward_step(s, decode_batch(1, 64)).graph_size, 1);
  EXPECT_EQ(forward_step(s, decode_batch(2, 64)).graph_size, 2);
  EXPECT_EQ(forward_step(s, decode_batch(3, 64)).graph_size, 0);
}

}  // namespace
}  // namespace headroom
