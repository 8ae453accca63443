// SGLang's FA3 decode schedule (core/backends/fa3_sglang.hpp), pinned with numbers worked by hand
// from FA3's formulas (Dao-AILab hopper/ at 0251105: flash_api.cpp get_num_splits and the
// metadata layout, heuristics.h num_splits_heuristic, tile_size.h tile_size_fwd_sm90,
// flash_prepare_scheduler.cu prepare_varlen_num_blocks_kernel; 132 SMs, 16-bit, page size 16) and
// from SGLang 34af3ff's choice of geometry and lengths (FlashAttentionBackend).
#include <gtest/gtest.h>

#include "core/backends/fa3_sglang.hpp"

namespace headroom {
namespace {

engine_settings sglang_engine(int64_t max_num_seqs = 8) {
  engine_settings s;
  s.flavour = engine_flavour::sglang;
  s.max_num_seqs = max_num_seqs;  // default graphs: 1, 2, 4, 8, 16 cut at the pool (8): 1, 2, 4, 8
  return s;
}

batch sglang_decode_batch(std::vector<int64_t> seq_lens) {
  batch b;
  b.seq_lens = std::move(seq_lens);
  b.query_lens.assign(b.seq_lens.size(), 1);
  return b;
}

// Dao-AILab's layout: the dynamic-split and m-block vectors always, the sort vector unless local,
// the heads-in-L2 vector when causal or local, then the semaphore. One request: r = 4, so
// 1 + 4 x 4 = 17 entries causal, 1 + 3 x 4 = 13 not; 5 requests: r = 8, 1 + 4 x 8 = 33. Local
// drops the sort vector: 1 + 3 x 4 = 13. No split count enters.
TEST(Fa3Sglang, UpstreamLayout) {
  EXPECT_EQ(fa3_upstream_layout_of(1, false, true).size(), 17);
  EXPECT_EQ(fa3_upstream_layout_of(1, false, false).size(), 13);
  EXPECT_EQ(fa3_upstream_layout_of(5, false, true).size(), 33);
  EXPECT_EQ(fa3_upstream_layout_of(1, true, true).size(), 13);
}

// Decode of 8 q heads over 1 kv head, D 64, 768 keys (one-token decode at D 64 is not causal).
// vLLM's fork: one MMA warpgroup (8 packed rows <= 64), tile 64 x 192, 4 n-blocks: one split.
// Dao-AILab's tiles have no one-warpgroup row: 192 x 192, paged KV without TMA (16 % 192 != 0),
// so 192 x 128: 6 n-blocks, 1 m-block x 1 kv head; efficiency s / 132, the first within 85% of
// 6 / 132 is 6 (5 / 132 = 0.0379 < 0.85 x 0.0455 = 0.0386).
TEST(Fa3Sglang, UpstreamTilesSplitOtherwise) {
  fa3_call c{8, 1, 64, 16, 0, 1, 768};
  EXPECT_EQ(fa3_heuristic_splits(c), 1);
  c.build = fa3_build::upstream;
  EXPECT_EQ(fa3_call_tile(c).m, 192);
  EXPECT_EQ(fa3_call_tile(c).n, 128);
  EXPECT_EQ(fa3_heuristic_splits(c), 6);
  EXPECT_EQ(fa3_upstream_tile_size(128, false, false, false).n, 176);
  EXPECT_EQ(fa3_upstream_tile_size(192, false, false, false).n, 112);
}

// Which forwards precompute: a one-token-per-request step (replay when it fits a FULL graph,
// eager without graphs), the capture of a graph (a uniform dummy); nothing for an extend step,
// with speculative tokens, under DP attention (attention TP 2 or a gathered buffer), prefill CP,
// two-batch overlap, or the vllm flavour.
TEST(Fa3Sglang, WhichPassesPrecompute) {
  const engine_settings s = sglang_engine();
  const batch decode = sglang_decode_batch({100, 200});
  EXPECT_EQ(sglang_fa3_pass_of(s, forward_step(s, decode)), sglang_fa3_pass::replay);
  engine_settings eager = s;
  eager.cg_mode = cudagraph_mode::none;
  EXPECT_EQ(sglang_fa3_pass_of(eager, forward_step(eager, decode)), sglang_fa3_pass::eager);
  batch extend = decode;
  extend.query_lens = {1, 5};
  EXPECT_EQ(sglang_fa3_pass_of(s, forward_step(s, extend)), sglang_fa3_pass::none);
  const engine_step capture = realise_step(s, {step_kind::dummy, 4, true, 0}, {}, {});
  EXPECT_EQ(sglang_fa3_pass_of(s, capture), sglang_fa3_pass::capture);
  for (auto off : {+[](engine_settings& e) { e.attn_tp_size = 2; },
                   +[](engine_settings& e) { e.gathered_buffer = true; },
                   +[](engine_settings& e) { e.attn_cp_size = 2; },
                   +[](engine_settings& e) { e.two_batch_overlap = true; },
                   +[](engine_settings& e) { e.num_speculative_tokens = 1; },
                   +[](engine_settings& e) { e.flavour = engine_flavour::vllm; }}) {
    engine_settings o = s;
    off(o);
    EXPECT_EQ(sglang_fa3_pass_of(o, forward_step(o, decode)), sglang_fa3_pass::none);
  }
}

// SGLang schedules with the config's head_dim 128 (64 < D <= 128 with a paged cache: one-token
// decode stays causal, so the heads-in-L2 vector is there): one request, 1 + 4 x 4 = 17 entries.
// A full layer of head size 256 runs with causal dropped: 1 + 3 x 4 = 13, so CHECK_SHAPE fails.
// The split counts do not enter Dao-AILab's layout.
TEST(Fa3Sglang, HeadSizeAcrossTheCausalRule) {
  engine_settings s = sglang_engine();
  s.cg_mode = cudagraph_mode::none;
  const engine_step st = forward_step(s, sglang_decode_batch({100}));
  fa3_group g{4, 1, 128, 16, 0};
  const fa3_plan same = plan_fa3_sglang(s, st, sglang_fa3_pass::eager, g);
  EXPECT_EQ(same.sched.size(), 17);
  EXPECT_EQ(same.run_size, 17);
  g.run_q_heads = 4, g.run_kv_heads = 1, g.run_head_size = 256;
  const fa3_plan layer = plan_fa3_sglang(s, st, sglang_fa3_pass::eager, g);
  EXPECT_EQ(layer.sched.size(), 17);
  EXPECT_EQ(layer.run_size, 13);
}

// Config 8 q heads over 1 kv head, D 128; a full layer of 8 kv heads (MHA). Tile 128 x 128 both
// (causal, paged without TMA). One request of 3000 keys:
//  eager: the schedule sees 3000 keys, 24 n-blocks, 1 m-block x 1 kv head: s / 132, the first
//    within 85% of 24 / 132 is 21. The run sees the page table's 3008 tokens, 24 n-blocks, 8
//    m-blocks in all: 8 s / 132 peaks at s = 16 (0.970), the first within 85% is 14 (0.848).
//    The prepare kernel: 24 blocks, blocks_per_sm = ceil(24 x 1.1 x 1 / 132) = 1, so the request
//    gets min(24, 21) = 21 splits, past the run's out_accum of 14.
//  replay (graph of 1): the schedule sees max_context_len 4096, 32 n-blocks: the first within 85%
//    of 32 / 132 is 28; the run 14 as before (0.970 at s = 16 and 32); the request min(24, 28) = 24.
// The config's own geometry (1 kv head) runs with the schedule's count, which bounds the request's.
TEST(Fa3Sglang, ConfigKvHeadsOverSplitTheLayer) {
  engine_settings eager = sglang_engine();
  eager.cg_mode = cudagraph_mode::none;
  fa3_group g{8, 1, 128, 16, 0};
  g.run_kv_heads = 8;
  const fa3_plan e =
      plan_fa3_sglang(eager, forward_step(eager, sglang_decode_batch({3000})), sglang_fa3_pass::eager, g);
  EXPECT_EQ(e.sched_resolved, 21);
  EXPECT_EQ(e.run_resolved, 14);
  EXPECT_EQ(e.sched_dynamic_max, 21);
  EXPECT_EQ(e.sched.size(), e.run_size);
  const engine_settings s = sglang_engine();
  const engine_step st = forward_step(s, sglang_decode_batch({3000}));
  ASSERT_EQ(st.graph_size, 1);
  const fa3_plan r = plan_fa3_sglang(s, st, sglang_fa3_pass::replay, g);
  EXPECT_EQ(r.sched_resolved, 28);
  EXPECT_EQ(r.run_resolved, 14);
  EXPECT_EQ(r.sched_dynamic_max, 24);
  g.run_kv_heads = 0;
  EXPECT_EQ(plan_fa3_sglang(s, st, sglang_fa3_pass::replay, g).run_resolved, 28);
}

// Head size v. SGLang's get_scheduler_metadata call passes no headdim_v, so FA3 schedules with
// v = head_dim; mha_fwd runs with the v cache's. Head size 192, page size 128, an eager decode of
// requests over 2000 and 9 keys (the run's page table is 2048 tokens wide).
//  MiMo-V2's full layers (64 q heads over 4 kv heads): 16 packed query rows never outgrow the
//    128-row tile, so both sides read pages without TMA, on 96-key tiles whatever v is. Schedule:
//    21 n-blocks, 4 m-blocks in all, 4 s / 132 peaks at s = 21, the first within 85% is 18. Run:
//    22 n-blocks, the first within 85% of 88 / 132 is 19, with v 128 as with 192.
//  256 q heads over 1 kv head: 256 packed rows (2 m-blocks). The schedule's 192 / 192 tile is 112
//    keys wide, which does not divide a page of 128, so no TMA: 96-key tiles, 21 n-blocks, the
//    first s within 85% of 42 / 132 is 18; the prepare kernel (2 m-blocks x (21 + 1) n-blocks = 44
//    blocks, ceil(44 x 1.1 / 132) = 1 a SM) gives the long request min(21, 18) = 18. The run's
//    192 / 128 tile is 128 keys wide: TMA, 16 n-blocks, the first within 85% of 32 / 132 is 14, so
//    out_accum holds 14 splits where the request writes 18. Were the schedule given v, it would
//    take TMA too: 16 n-blocks, 14 splits, as the run. With no v on either side (a 192 / 192
//    layer) the run is on 96-key tiles: 22 n-blocks, 19 splits, and nothing is written past.
TEST(Fa3Sglang, HeadSizeVIsNotScheduled) {
  engine_settings s = sglang_engine();
  s.cg_mode = cudagraph_mode::none;
  const engine_step st = forward_step(s, sglang_decode_batch({2000, 9}));
  fa3_group mimo{64, 4, 192, 128, 0};
  mimo.run_head_size_v = 128;
  const fa3_plan m = plan_fa3_sglang(s, st, sglang_fa3_pass::eager, mimo);
  EXPECT_EQ(m.sched_call.head_size_v, 0);
  EXPECT_EQ(m.run_call.head_size_v, 128);
  EXPECT_EQ(m.sched_resolved, 18);
  EXPECT_EQ(m.run_resolved, 19);
  mimo.run_head_size_v = 0;
  EXPECT_EQ(plan_fa3_sglang(s, st, sglang_fa3_pass::eager, mimo).run_resolved, 19);

  fa3_group wide{256, 1, 192, 128, 0};
  wide.run_head_size_v = 128;
  const fa3_plan w = plan_fa3_sglang(s, st, sglang_fa3_pass::eager, wide);
  EXPECT_EQ(w.sched_resolved, 18);
  EXPECT_EQ(w.sched_dynamic_max, 18);
  EXPECT_EQ(w.run_resolved, 14);
  EXPECT_FALSE(fa3_paged_kv_tma(w.sched_call));
  EXPECT_TRUE(fa3_paged_kv_tma(w.run_call));
  wide.head_size_v = 128;  // a call that passed headdim_v
  EXPECT_EQ(plan_fa3_sglang(s, st, sglang_fa3_pass::eager, wide).sched_resolved, 14);
  wide.head_size_v = wide.run_head_size_v = 0;
  EXPECT_EQ(plan_fa3_sglang(s, st, sglang_fa3_pass::eager, wide).run_resolved, 19);
}

// The capture of the largest graph (8 requests): the schedule sees sequence length 1 (one
// n-block: one split, every request 1), layout 1 + 4 x 8 = 33 entries, which is exactly the
// persistent buffer of 1 + 4 x round_up(8, 4); the run at the page table's 4096 tokens splits 14
// ways but no request is given more than 1. Rows: cu_seqlens_q of 9, cache_seqlens of 8.
TEST(Fa3Sglang, CaptureFillsThePersistentBuffer) {
  const engine_settings s = sglang_engine();
  const engine_step st = realise_step(s, {step_kind::dummy, 8, true, 0}, {}, {});
  fa3_group g{8, 1, 128, 16, 0};
  g.run_kv_heads = 8;
  const fa3_plan p = plan_fa3_sglang(s, st, sglang_fa3_pass::capture, g);
  EXPECT_EQ(p.sched_resolved, 1);
  EXPECT_EQ(p.sched_dynamic_max, 1);
  EXPECT_EQ(p.run_resolved, 14);
  EXPECT_EQ(p.sched.size(), 33);
  ASSERT_EQ(p.buffers.size(), 3u);
  EXPECT_EQ(p.buffers[0].capacity_elems(), 33);
  EXPECT_EQ(p.buffers[1].capacity_elems(), 9);
  EXPECT_EQ(p.buffers[2].capacity_elems(), 8);
}

}  // namespace
}  // namespace headroom
