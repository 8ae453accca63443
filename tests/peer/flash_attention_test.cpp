// Peer tests: FlashAttention-3's hopper tests (vllm-project/flash-attention at 617264c) against
// core/backends/fa3.cpp. The hopper tests assert no metadata length; what test_flash_attn_kvcache
// relies on is that scheduler metadata precomputed by get_scheduler_metadata for the run's own
// arguments passes mha_fwd's CHECK_SHAPE, twice in a row (metadata reuse).
#include <gtest/gtest.h>

#include "core/backends/fa3.hpp"

namespace headroom {
namespace {

// hopper/test_flash_attn.py::test_flash_attn_kvcache: batch_size 5, nheads 6, nheads_k 6 / 3 / 1
// (mha, gqa, mqa), paged KV, num_splits in [1, 3, 0] with precompute_metadata. headroom's plan of
// a 5-request decode step and of a 5-request prefill step (vLLM calls with causal=True; num_splits 0,
// the heuristic, when no CUDA graph): the schedule's length equals the one the run recomputes, the
// split counts resolve alike, and the metadata tensor holds it.
void expect_precomputed_metadata_fits_the_run(bool e4m3) {
  engine_settings s;
  s.cg_mode = cudagraph_mode::none;
  batch prefill;
  prefill.seq_lens.assign(5, 512);
  prefill.query_lens.assign(5, 128);
  for (const batch& b : {decode_batch(5, 512), prefill})
    for (int64_t kv : {6, 3, 1}) {
      const engine_step st = forward_step(s, b);
      fa3_group g{6, kv, 128, 16, 0};
      g.e4m3 = e4m3;
      const fa3_plan p = plan_fa3(s, st, g, {});
      EXPECT_EQ(p.sched.batch, 5);
      EXPECT_EQ(p.sched.rounded, 8);  // round_up(5, 4), whatever the dtype
      EXPECT_EQ(p.sched.size(), p.run_size) << kv << " kv heads, q " << b.max_query_len();
      EXPECT_EQ(p.sched_splits, p.run_splits);
      EXPECT_EQ(p.sched_resolved, p.run_resolved) << kv << " kv heads, q " << b.max_query_len();
      for (const buffer_need& n : fa3_needs(p))
        EXPECT_LE(n.bytes(), find_buffer(p.buffers, n.name)->capacity_bytes) << n.name;
    }
}

TEST(Fa3SchedulerMetadata, PrecomputedMetadataFitsTheRun) { expect_precomputed_metadata_fits_the_run(false); }

// The same test's float8_e4m3fn row (its dtype parametrisation on SM90, d 128: q, k and v cast
// to e4m3): vLLM with an fp8 cache schedules with qkv_dtype fp8 and quantises q, so schedule and
// run both use tile_size_fwd_sm90's FP8 tiles and count one byte an element.
TEST(Fa3SchedulerMetadata, PrecomputedMetadataFitsTheRunAtE4m3) {
  expect_precomputed_metadata_fits_the_run(true);
}

// The same batch with explicit split counts 1 and 3 (the test's num_splits_vals): the layout for
// one split has no dynamic-split vector, the one for 3 has it (batch 5 <= 992): 8 more entries.
TEST(Fa3SchedulerMetadata, DynamicSplitVectorOnlyAboveOneSplit) {
  const fa3_layout one = fa3_layout_of(5, 1, true), three = fa3_layout_of(5, 3, true);
  EXPECT_FALSE(one.dynamic_split);
  EXPECT_TRUE(three.dynamic_split);
  EXPECT_EQ(three.size() - one.size(), 8);
}

}  // namespace
}  // namespace headroom
