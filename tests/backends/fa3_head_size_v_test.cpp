// FA3 calls whose value head size differs from the query/key head size (vLLM's
// FlashAttentionDiffKV layers: MiMo-V2's 192 / 128). The values are worked by hand from
// vllm-project/flash-attention at 617264c: hopper/tile_size.h (tile_size_fwd_sm90), hopper/
// flash_api.cpp (get_pagedkv_tma, get_num_splits, mha_fwd's head-size checks and metadata length)
// and hopper/heuristics.h (num_splits_heuristic), and from vLLM's FlashAttentionMetadataBuilder at
// 6adad087, whose _get_scheduler_metadata passes no headdim_v.
#include <gtest/gtest.h>

#include "core/backends/fa3.hpp"
#include "core/engine/steps.hpp"

namespace headroom {
namespace {

// Head size 192: the TMA tile is 128 keys wide when v is at most 128, 96 otherwise; paged without
// TMA, or local, it is 96 either way. Dao-AILab's tree: 128 and 112.
TEST(Fa3HeadSizeV, TheTileAtHeadSize192ReadsV) {
  EXPECT_EQ(fa3_tile_size(192, true, false, false, false, false, 128).n, 128);
  EXPECT_EQ(fa3_tile_size(192, true, false, false, false, false, 0).n, 96);
  EXPECT_EQ(fa3_tile_size(192, true, false, true, false, false, 128).n, 96);
  EXPECT_EQ(fa3_tile_size(192, false, true, false, false, false, 128).n, 96);
  EXPECT_EQ(fa3_tile_size(192, true, false, false, false, false, 128).m, 128);
  EXPECT_EQ(fa3_upstream_tile_size(192, true, false, false, false, 128).n, 128);
  EXPECT_EQ(fa3_upstream_tile_size(192, true, false, false, false, 0).n, 112);
  // The FP8 rows do not read v.
  EXPECT_EQ(fa3_tile_size(192, true, false, false, false, true, 128).n, 96);
}

// Head size 64 with a value of 512 (MLA's absorbed form) or 256 takes tiles of its own.
TEST(Fa3HeadSizeV, SmallHeadsWithLargeValues) {
  const fa3_tile v512 = fa3_tile_size(64, true, false, true, true, false, 512);
  EXPECT_EQ(v512.m, 64);
  EXPECT_EQ(v512.n, 64);
  const fa3_tile v256 = fa3_tile_size(64, true, false, true, false, false, 256);
  EXPECT_EQ(v256.m, 128);
  EXPECT_EQ(v256.n, 96);
  EXPECT_EQ(fa3_tile_size(64, true, false, true, false, false, 128).n, 128);  // the same-size row
}

// mha_fwd takes a value head size apart from the head size only in (96, 128] beside (128, 192], or
// up to 512 beside at most 64 (16-bit above 256), each a multiple of 8 (16 for e4m3).
TEST(Fa3HeadSizeV, MhaFwdRefusals) {
  EXPECT_EQ(fa3_mha_fwd_refusal(16, 4, 192, false, 128), "");
  EXPECT_EQ(fa3_mha_fwd_refusal(16, 4, 160, false, 104), "");
  EXPECT_EQ(fa3_mha_fwd_refusal(16, 4, 64, false, 512), "");
  EXPECT_EQ(fa3_mha_fwd_refusal(16, 4, 192, false, 192), "");
  EXPECT_EQ(fa3_mha_fwd_refusal(16, 4, 192, false, 0), "");
  EXPECT_NE(fa3_mha_fwd_refusal(16, 4, 256, false, 128), "");
  EXPECT_NE(fa3_mha_fwd_refusal(16, 4, 192, false, 96), "");
  EXPECT_NE(fa3_mha_fwd_refusal(16, 4, 128, false, 64), "");
  EXPECT_NE(fa3_mha_fwd_refusal(16, 4, 64, true, 512), "");
  EXPECT_NE(fa3_mha_fwd_refusal(16, 4, 192, false, 124), "");
  EXPECT_NE(fa3_mha_fwd_refusal(16, 4, 64, false, 520), "");
}

engine_step eager_step(engine_settings& eager, int64_t query, int64_t keys) {
  eager.cg_mode = cudagraph_mode::none;
  batch b;
  b.query_lens = {query};
  b.seq_lens = {keys};
  return forward_step(eager, b);
}

// vLLM's builder schedules a DiffKV layer (64 query heads over 4 kv heads, head size 192, v 128) as
// if v were 192. An eager step of 100 new tokens over 400 keys, blocks of 128. Schedule (v 192): the
// TMA tile would be 96 keys wide and 128 % 96 != 0, so paged without TMA, tile 128 x 96; 1,600
// packed rows, 13 m-blocks, 52 in all (< 0.8 x 132); 5 n-blocks: efficiencies 0.39, 0.79, 0.59, 0.79,
// 0.98 for 1-5 splits, the first within 85% of the best is 5: the dynamic-split vector, with the
// causal head swizzle 1 + 3 x 4 = 13 entries. The layer's run (v 128): 128 % 128 == 0 and 1,600 >
// 128 rows, so TMA, tile 128 x 128, 4 n-blocks: 1 split, 1 + 2 x 4 = 9 entries. mha_fwd's
// CHECK_SHAPE raises on the 13-entry metadata.
TEST(Fa3HeadSizeV, AScheduleWithoutVFailsTheRunsLengthCheck) {
  engine_settings eager;
  const engine_step st = eager_step(eager, 100, 400);
  fa3_group g{64, 4, 192, 128, 0};
  g.run_q_heads = 64, g.run_kv_heads = 4, g.run_head_size = 192, g.run_head_size_v = 128;
  const fa3_plan p = plan_fa3(eager, st, g, {});
  EXPECT_FALSE(fa3_paged_kv_tma(p.sched_call));
  EXPECT_TRUE(fa3_paged_kv_tma(p.run_call));
  EXPECT_EQ(fa3_call_tile(p.sched_call).n, 96);
  EXPECT_EQ(fa3_call_tile(p.run_call).n, 128);
  EXPECT_EQ(p.sched_resolved, 5);
  EXPECT_EQ(p.sched.size(), 13);
  EXPECT_EQ(p.run_resolved, 1);
  EXPECT_EQ(p.run_size, 9);

  // Blocks of 16: both sides page without TMA on 96-key tiles and agree.
  fa3_group small = g;
  small.page_size = 16;
  const fa3_plan q = plan_fa3(eager, st, small, {});
  EXPECT_EQ(q.sched.size(), 13);
  EXPECT_EQ(q.run_size, 13);

  // The schedule told v (the call a builder passing headdim_v would make) agrees with the run.
  fa3_group told = g;
  told.head_size_v = 128;
  const fa3_plan r = plan_fa3(eager, st, told, {});
  EXPECT_EQ(r.sched_resolved, 1);
  EXPECT_EQ(r.sched.size(), 9);
  EXPECT_EQ(r.run_size, 9);
}

// Without an ahead-of-time schedule (MiMo-V2 mixes full and sliding layers) mha_fwd prepares its
// own call with the layer's v, so the metadata it allocates is the run's length.
TEST(Fa3HeadSizeV, ACallWithoutScheduleUsesTheLayersV) {
  engine_settings eager;
  const engine_step st = eager_step(eager, 100, 400);
  fa3_group own{64, 4, 192, 128, 0};
  own.head_size_v = 128;
  const fa3_plan p = plan_fa3_in_call(eager, st, own);
  EXPECT_TRUE(p.in_call);
  EXPECT_EQ(fa3_head_size_v(p.sched_call), 128);
  EXPECT_EQ(p.sched.size(), 9);
  EXPECT_EQ(p.run_size, 9);
  EXPECT_EQ(p.buffers.front().capacity_bytes, 4 * 9);
}

}  // namespace
}  // namespace headroom
