// Sizing of an engine step's metadata (docs/catalogue.md C3, C5, C6, C7), pinned with the numbers
// of the upstream sources and hand computations written out here.
#include <gtest/gtest.h>

#include <random>

#include "core/backends/fa3.hpp"
#include "core/backends/mqa_meta.hpp"
#include "core/backends/offsets.hpp"
#include "core/backends/request_meta.hpp"

namespace headroom {
namespace {

engine_settings with(int64_t max_num_seqs, std::vector<int64_t> capture_sizes = {}) {
  engine_settings s;
  s.max_num_seqs = max_num_seqs;
  s.capture_sizes = std::move(capture_sizes);
  return s;
}

// One request decoding with FA3's split on and head swizzle (head size 128): r = round_up(1, 4) =
// 4, three vectors and the semaphore: 13 entries, the semaphore at 12. vLLM #33841's buffer of
// max_num_seqs + 1 held 2 at max_num_seqs 1.
TEST(Fa3, LayoutOfOneRequest) {
  const fa3_layout l = fa3_layout_of(1, fa3_graph_max_splits, true);
  EXPECT_EQ(l.rounded, 4);
  EXPECT_EQ(l.nvec, 3);
  EXPECT_EQ(l.size(), 13);
  EXPECT_EQ(fa3_layout_of(1, 1, true).size(), 9);   // no dynamic split: 1 + 2 * 4
  EXPECT_EQ(fa3_layout_of(993, 16, true).nvec, 2);  // above 992 batches: no dynamic split
  fa3_mutants old;
  old.old_layout = true;
  EXPECT_EQ(fa3_metadata_capacity(with(1), old), 2);
}

// vLLM #34043: 1 + 4 * round_up(max(max_num_seqs, max capture), 4): 1 + 4 * 512 at the defaults.
// #23465's 4 * Bmax + 1 overflows for Bmax 1, 2, 5 (13 > 5, 13 > 9, 25 > 21), not for 3, 4, 6.
TEST(Fa3, CapacityWithAndWithoutTheRoundUp) {
  EXPECT_EQ(fa3_metadata_capacity(engine_settings{}, {}), 2049);
  fa3_mutants no_roundup;
  no_roundup.no_roundup = true;
  for (auto [bmax, overflows] :
       {std::pair{1, true}, {2, true}, {5, true}, {3, false}, {4, false}, {6, false}}) {
    const int64_t need = fa3_layout_of(bmax, fa3_graph_max_splits, true).size();
    EXPECT_EQ(need > fa3_metadata_capacity(with(bmax, {1}), no_roundup), overflows) << "Bmax " << bmax;
    EXPECT_LE(need, fa3_metadata_capacity(with(bmax, {1}), {})) << "the fix, Bmax " << bmax;
  }
  engine_settings eager;
  eager.cg_mode = cudagraph_mode::none;  // no persistent buffer: a fresh tensor per call
  EXPECT_EQ(fa3_metadata_capacity(eager, {}), 0);
}

fa3_call decode_call(int64_t q_heads, int64_t kv_heads, int64_t head_size, int64_t max_seq_len,
                     int64_t window = 0) {
  return {q_heads, kv_heads, head_size, 16, window, 1, max_seq_len};
}

// get_num_splits for varlen on SM90 (132 SMs), worked by hand from hopper/tile_size.h and
// heuristics.h. Decode, 8 q heads over 1 kv head, D 128, block 16: one MMA warpgroup (8 packed
// rows <= 64), causal, no paged TMA (16 % 128 != 0): tile 64 x 128. Keys 2000: 16 n-blocks; 1
// m-block: efficiency s / 132 for s <= 16, the first within 85% of 16 / 132 is 14. Keys 512: 4
// n-blocks (upstream: "we never split for hdim = 128 and seqlen_k = 512"); 513: 5 blocks, 5 splits.
TEST(Fa3, SplitHeuristicDecode) {
  EXPECT_EQ(fa3_heuristic_splits(decode_call(8, 1, 128, 2000)), 14);
  EXPECT_EQ(fa3_heuristic_splits(decode_call(8, 1, 128, 512)), 1);
  EXPECT_EQ(fa3_heuristic_splits(decode_call(8, 1, 128, 513)), 5);
  // D 64: not causal in decode, tile 64 x 192: 768 keys are 4 blocks, 769 five.
  EXPECT_EQ(fa3_heuristic_splits(decode_call(8, 1, 64, 768)), 1);
  EXPECT_EQ(fa3_heuristic_splits(decode_call(8, 1, 64, 769)), 5);
  // D 256: tile 128 x 80: 320 keys are 4 blocks, 321 five.
  EXPECT_EQ(fa3_heuristic_splits(decode_call(8, 1, 256, 320)), 1);
  EXPECT_EQ(fa3_heuristic_splits(decode_call(8, 1, 256, 321)), 5);
  // 128 kv heads: 128 m-blocks >= 0.8 x 132 = 105.6: one split; 105 kv heads: the loop, 4096 keys
  // (32 blocks): 105 s / 132 waves reach 0.994 at s = 5, the first at 85% of the best.
  EXPECT_EQ(fa3_heuristic_splits(decode_call(128, 128, 128, 4096)), 1);
  EXPECT_EQ(fa3_heuristic_splits(decode_call(105, 105, 128, 4096)), 5);
  // A 512-token window: local, tile 128 x 128, keys loaded min(8192, 0 + 511 + 1 + 128) = 640, 5
  // blocks: 5 splits (64 blocks without the window would give 55).
  EXPECT_EQ(fa3_heuristic_splits(decode_call(8, 1, 128, 8192, 512)), 5);
}

// The GQA group packs into the query: 100 tokens x 32 / 8 heads = 400 rows, tile 128 x 128 (causal):
// 4 m-blocks x 8 kv heads = 32; 4096 keys, 32 blocks: 32 s / 132 waves reach 0.97 at s = 4. 512
// tokens x 64 / 8 = 4096 rows: 32 m-blocks x 8 = 256 >= 105.6: one split.
TEST(Fa3, SplitHeuristicPacksTheGroup) {
  EXPECT_EQ(fa3_heuristic_splits({32, 8, 128, 16, 0, 100, 4096}), 4);
  EXPECT_EQ(fa3_heuristic_splits({64, 8, 128, 16, 0, 512, 8192}), 1);
}

// Varlen counts the batch as 1: an eager batch of 200 one-token requests of 2000 keys (8 q heads,
// 1 kv head, D 128) splits 14 ways, so the layout has the dynamic-split vector: 1 + 3 x 200 = 601.
TEST(Fa3, EagerBatchSplitsLikeOneRequest) {
  engine_settings eager;
  eager.cg_mode = cudagraph_mode::none;
  const engine_step st = forward_step(eager, decode_batch(200, 2000));
  const fa3_plan p = plan_fa3(eager, st, {8, 1, 128}, {});
  EXPECT_TRUE(p.sched.dynamic_split);
  EXPECT_EQ(p.sched.size(), 601);
  EXPECT_EQ(p.run_size, 601);
}

// vLLM's builder schedules with the model's query heads, each layer runs with its own (mha_fwd takes
// h from q). Model 4 q heads, a layer of 2, 2 kv heads, D 64; eager step of query lengths 1 and 33
// over 513 and 33 keys (causal). Schedule: 66 packed rows > 64, so two MMA warpgroups, tile 192 x 128
// (causal), 5 n-blocks of the 513 keys, 2 m-blocks in all (< 0.8 x 132): 5 splits, the dynamic-split
// and head-swizzle vectors, 1 + 3 x 4 = 13 entries. The layer's run: 33 packed rows, one warpgroup,
// tile 64 x 192, 3 n-blocks (<= 4): 1 split, 1 + 2 x 4 = 9 entries, so CHECK_SHAPE fails.
TEST(Fa3, RunRecomputesTheSplitsFromTheLayersHeads) {
  engine_settings eager;
  eager.cg_mode = cudagraph_mode::none;
  batch b;
  b.query_lens = {1, 33};
  b.seq_lens = {513, 33};
  const engine_step st = forward_step(eager, b);
  fa3_group g{4, 2, 64};
  const fa3_plan same = plan_fa3(eager, st, g, {});
  EXPECT_EQ(same.sched_resolved, 5);
  EXPECT_EQ(same.sched.size(), 13);
  EXPECT_EQ(same.run_size, 13);
  g.run_q_heads = 2, g.run_kv_heads = 2, g.run_head_size = 64;
  const fa3_plan layer = plan_fa3(eager, st, g, {});
  EXPECT_EQ(layer.sched.size(), 13);
  EXPECT_EQ(layer.run_resolved, 1);
  EXPECT_EQ(layer.run_size, 9);
}

// Both split counts above 1, so the lengths agree, but out_accum is the run's. Model 48 q heads, a
// layer of 64, 8 kv heads, D 128, one request of 17 tokens over 2000 keys (causal, paged without
// TMA: tile 128 x 128, 16 n-blocks). Schedule: 102 packed rows, 1 m-block, 8 in all: the heuristic's
// best efficiency is 128 / 132 at 16 splits, the first within 85% of it is 14. Run: 136 rows, 2
// m-blocks, 16 in all: best 128 / 132 at 8, first within 85% 7. The prepare kernel: 16 blocks,
// blocks_per_sm = ceil(16 x 1.1 x 8 / 132) = 2, the request's count min(16 / 2, 14) = 8 > 7.
TEST(Fa3, ScheduledSplitsPastTheRunsOutAccum) {
  engine_settings eager;
  eager.cg_mode = cudagraph_mode::none;
  batch b;
  b.query_lens = {17};
  b.seq_lens = {2000};
  const engine_step st = forward_step(eager, b);
  fa3_group g{48, 8, 128};
  g.run_q_heads = 64, g.run_kv_heads = 8, g.run_head_size = 128;
  const fa3_plan p = plan_fa3(eager, st, g, {});
  EXPECT_EQ(p.sched_resolved, 14);
  EXPECT_EQ(p.run_resolved, 7);
  EXPECT_EQ(p.sched.size(), 13);
  EXPECT_EQ(p.run_size, 13);
  EXPECT_EQ(p.sched_dynamic_max, 8);
  // One CTA's limit: above 992 requests, or one static split, every request gets one split.
  EXPECT_EQ(fa3_dynamic_splits_max({48, 8, 128, 16, 0, 17, 2000}, {0, 17}, {2000}, 1), 1);
  EXPECT_EQ(fa3_dynamic_splits_max({48, 8, 128, 16, 0, 17, 2000}, {0, 17}, {2000}, 5), 5);
}

// The kernel tiles each request's query as the schedule packed it (vLLM's fork: the packed length,
// tiled by the run's kBlockM). Model 48 q heads, a layer of 64, 8 kv heads, D 128, causal, paged
// without TMA: the layer's tile is 128 x 128 once its packed query passes 64 rows. q = 17: the
// schedule's 102 rows cover 1 m-block of 128, the layer packs 136: 8 rows per kv head, 64 in all
// (token 16, every head). q = 16: 96 rows still cover 128 = 16 x 8. q = 40: 240 rows cover 2
// m-blocks (256) of the layer's 320: 64 rows per kv head, 512.
TEST(Fa3, ALayerOfMoreHeadsPerKvHeadLosesRows) {
  engine_settings eager;
  eager.cg_mode = cudagraph_mode::none;
  const auto rows = [&](std::vector<int64_t> q, int64_t layer_heads) {
    batch b;
    b.query_lens = q;
    b.seq_lens.assign(q.size(), 2000);
    fa3_group g{48, 8, 128};
    g.run_q_heads = layer_heads, g.run_kv_heads = 8, g.run_head_size = 128;
    const fa3_plan p = plan_fa3(eager, forward_step(eager, b), g, {});
    return fa3_rows_never_computed(p, p.run_call);
  };
  EXPECT_EQ(rows({17}, 64), 64);
  EXPECT_EQ(rows({16}, 64), 0);
  EXPECT_EQ(rows({17, 40}, 64), 64 + 512);
  EXPECT_EQ(rows({17, 40}, 48), 0);  // the schedule's own geometry
  EXPECT_EQ(rows({17, 40}, 32), 0);  // fewer heads: tiles past the packed query are masked
}

// FA3's split combine takes each request's m-blocks from the prepared length when its tiles are sparse
// (found by an FA3 campaign on the engine target under model-wide-heads). Model 1 q head, a layer of
// 17 over 1 kv head, D 64; three decoding requests over 1, 193 and 1 keys replay the graph of 4 with
// 32 splits. The schedule gives request 1 (two 128-key blocks, blocks_per_sm = ceil(4 x 1.1 / 132) =
// 1) 2 splits and the others 1. Combine tile M = 16 (head size v 64): 2 x ceil(3 / 16) = 2 < 4 x
// ceil(1 / 16) = 4, sparse, so request 1 gets ceil(1 x 1 x 1 / 16) = 1 m-block: 16 of its 17 rows,
// 1 row never combined. The forward kernel's own tile covers all 17 rows (none lost there). With
// the layer's own geometry nothing is lost.
TEST(Fa3, TheSplitCombineTilesThePreparedLength) {
  engine_settings s;
  s.max_num_seqs = 5;
  batch b;
  b.query_lens = {1, 1, 1};
  b.seq_lens = {1, 193, 1};
  const auto plan = [&](const engine_settings& e, int64_t sched_heads) {
    fa3_group g{sched_heads, 1, 64};
    g.run_q_heads = 17, g.run_kv_heads = 1, g.run_head_size = 64;
    return plan_fa3(e, forward_step(e, b), g, {});
  };
  const fa3_plan p = plan(s, 1);
  ASSERT_EQ(p.sched.batch, 4);
  EXPECT_EQ(p.run_resolved, 32);
  EXPECT_EQ(fa3_dynamic_splits(p.sched_call, p.query_start, p.seq_lens, p.sched_resolved),
            (std::vector<int64_t>{1, 2, 1, 1}));
  EXPECT_EQ(fa3_rows_never_computed(p, p.run_call), 0);
  EXPECT_EQ(fa3_rows_never_combined(p, p.run_call), 1);
  const fa3_plan own = plan(s, 17);
  EXPECT_EQ(fa3_rows_never_combined(own, own.run_call), 0);
}

// A layer run on a schedule of its own geometry loses no row, in the forward kernel or the combine,
// on 20,000 random steps (graphs or eager, 1-12 requests, head sizes 64 / 128 / 256, groups 1-16):
// the tiles each request gets from its prepared length cover its rows, and the combine's grid
// (ceil(total_q x h / M) + b) holds every request's m-blocks. With one more query head per kv head
// in the layer than in the schedule, some step loses rows.
TEST(Fa3, NoRowIsLostOnASchedulesOwnGeometry) {
  std::mt19937 rng(53002);
  const auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int64_t lost_with_more = 0;
  for (int i = 0; i < 20000; ++i) {
    engine_settings s;
    s.max_num_seqs = pick(1, 16);
    if (pick(0, 1) == 0) s.cg_mode = cudagraph_mode::none;
    batch b;
    for (int64_t r = pick(1, std::min<int64_t>(12, s.max_num_seqs)); r > 0; --r) {
      const int64_t q = pick(0, 3) == 0 ? pick(2, 40) : 1;
      b.query_lens.push_back(q);
      b.seq_lens.push_back(q + pick(0, 3000));
    }
    const int64_t kv = int64_t{1} << pick(0, 3), group = pick(1, 16), d = int64_t{64} << pick(0, 2);
    const engine_step st = forward_step(s, b);
    const fa3_plan own = plan_fa3(s, st, fa3_group{group * kv, kv, d}, {});
    ASSERT_EQ(fa3_rows_never_computed(own, own.run_call), 0) << i;
    ASSERT_EQ(fa3_rows_never_combined(own, own.run_call), 0) << i;
    fa3_group more{group * kv, kv, d};
    more.run_q_heads = (group + 1) * kv, more.run_kv_heads = kv, more.run_head_size = d;
    const fa3_plan p = plan_fa3(s, st, more, {});
    lost_with_more += fa3_rows_never_computed(p, p.run_call) + fa3_rows_never_combined(p, p.run_call);
  }
  EXPECT_GT(lost_with_more, 0);
}

// mha_fwd_get_scheduler_metadata drops window_size_left >= max_seqlen_k - 1: a window of 1024
// (left 1023) over at most 1024 keys is no window, over 1025 it is local.
TEST(Fa3, HeadSwizzleAndWindow) {
  EXPECT_TRUE(fa3_head_swizzle(1, 300, 128, 0));  // decode stays causal for 64 < D <= 128
  EXPECT_FALSE(fa3_head_swizzle(1, 300, 256, 0));
  EXPECT_FALSE(fa3_head_swizzle(1, 300, 64, 0));
  EXPECT_TRUE(fa3_head_swizzle(5, 300, 256, 0));  // causal prefill
  EXPECT_FALSE(fa3_head_swizzle(1, 1024, 256, 1024));
  EXPECT_TRUE(fa3_head_swizzle(1, 1025, 256, 1024));  // local
  const fa3_mask m = fa3_mask_of(decode_call(8, 1, 256, 1025, 1024));
  EXPECT_TRUE(m.local);
  EXPECT_EQ(m.window_left, 1023);
  EXPECT_EQ(m.window_right, 0);
}

// vLLM's attention_config.flash_attn_max_num_splits_for_cuda_graph defaults to 32 (16 was #20301's).
TEST(Fa3, GraphSplitCountIsVllmsDefault) { EXPECT_EQ(fa3_graph_max_splits, 32); }

// vLLM #20301: an eager batch above the largest capture size (513 tokens over 256 requests at the
// defaults) scheduled with the graph's 32 splits (3 vectors: 1 + 3 * 256 = 769) but run with the
// heuristic's one split (keys in one block; 2 vectors: 513): FA3's CHECK_SHAPE fails. #25490
// passes one value to both.
TEST(Fa3, ScheduleAndRunSplitsDiffer) {
  batch b;
  for (int i = 0; i < 256; ++i)
    b.seq_lens.push_back(i == 255 ? 3 : 2), b.query_lens.push_back(i == 255 ? 3 : 2);
  const engine_step st = forward_step(engine_settings{}, b);
  fa3_mutants bug;
  bug.split_mismatch = true;
  const fa3_plan p = plan_fa3(engine_settings{}, st, {8, 8, 128}, bug);
  EXPECT_EQ(p.sched.size(), 769);
  EXPECT_EQ(p.run_size, 513);
  const fa3_plan fixed = plan_fa3(engine_settings{}, st, {8, 8, 128}, {});
  EXPECT_EQ(fixed.sched.size(), fixed.run_size);
}

// SGLang's own test: get_cuda_graph_max_batch_size(args, 65) == 68 with attention TP 4 under
// require_gathered_buffer: a graph batch of 65 requests runs as 68, past a pool-sized buffer
// (#25124); the buffers hold _cuda_graph_capture_max_bs(pool) = 68. #40668: attention TP 8
// without the gather, pool 100, graphs up to 100: graph ceiling 100, eager ceiling 104, the
// graph-sized buffers 4 entries short.
TEST(RequestMeta, SglangCeilings) {
  engine_settings s = with(100, {100});
  s.flavour = engine_flavour::sglang;
  s.attn_tp_size = 8;
  EXPECT_EQ(sglang_graph_ceiling(s), 100);
  EXPECT_EQ(sglang_eager_ceiling(s), 104);
  EXPECT_EQ(request_meta_rows(s, {}), 104);
  EXPECT_EQ(request_meta_rows(s, {false, true, false}), 100);
  const engine_step warmup = realise_step(s, {step_kind::dummy, 100, true, 0}, {}, {});
  EXPECT_EQ(request_meta_batches(s, warmup), (std::vector<int64_t>{100, 104}));
  engine_settings g = with(65, {65});
  g.flavour = engine_flavour::sglang;
  g.attn_tp_size = 4;
  g.gathered_buffer = true;
  EXPECT_EQ(sglang_graph_ceiling(g), 68);
  EXPECT_EQ(request_meta_rows(g, {}), 68);
  EXPECT_EQ(request_meta_rows(g, {true, false, false}), 65);  // #25124: the pool, 3 rows short
  EXPECT_EQ(capture_sizes_of(g), (std::vector<int64_t>{65}));
  const engine_step graph65 = forward_step(g, decode_batch(65, 300));
  EXPECT_EQ(request_meta_batches(g, graph65), (std::vector<int64_t>{68}));
  // get_batch_sizes_to_capture drops sizes above the pool (100) and captures the pool itself:
  // vLLM's default list for 100 seqs goes to 200; SGLang allocates 100 + 1 indptr entries.
  engine_settings pool = with(100);
  pool.flavour = engine_flavour::sglang;
  EXPECT_EQ(max_capture_of(pool), 100);
  EXPECT_EQ(capture_sizes_of(pool)[capture_sizes_of(pool).size() - 2], 96);
  EXPECT_EQ(request_meta_rows(pool, {true, false, false}), 100);
  EXPECT_EQ(request_meta_rows(pool, {}), 100);
  // With 2 speculative tokens a size is 3 tokens a request: the pool of 100 is 300 tokens.
  pool.num_speculative_tokens = 2;
  EXPECT_EQ(max_capture_of(pool), 300);
  EXPECT_EQ(request_meta_rows(pool, {}), 100);
}

// vllm-ascend #16168: graphs pad to the capture size plus one dummy request. max_num_seqs 4,
// capture sizes up to 8: the graph of 8 binds 9 rows; the fix holds max(4, 8) + 1 = 9.
TEST(RequestMeta, AscendGraphBatchesCarryADummy) {
  engine_settings s = with(4);
  s.flavour = engine_flavour::vllm_ascend;
  EXPECT_EQ(request_meta_rows(s, {}), 9);
  EXPECT_EQ(request_meta_rows(s, {false, false, true}), 4);
  const engine_step capture = realise_step(s, {step_kind::dummy, 8, true, 0}, {}, {});
  EXPECT_EQ(request_meta_batches(s, capture), (std::vector<int64_t>{4, 9}));
  EXPECT_EQ(request_meta_rows(with(4), {}), 4);  // vLLM's FlashInfer builder: max_num_seqs
}

// DeepGEMM's scheduler reads prefix_sum[B] when every length is 0: past align(B, 32) only when B
// is a multiple of 32. The dummy's seq_len 1 over ratio 4 is 0; the fix clamps it to 1.
TEST(MqaMeta, AllEmptyMultipleOf32ReadsOnePast) {
  const engine_step dummy = realise_step(engine_settings{}, {step_kind::dummy, 32, true, 0}, {}, {});
  const auto zeros = compressed_lens(dummy, 4, true);
  EXPECT_EQ(zeros, std::vector<int32_t>(32, 0));
  EXPECT_EQ(compressed_lens(dummy, 4, false), std::vector<int32_t>(32, 1));
  EXPECT_EQ(mqa_meta_needs(plan_mqa_meta(zeros))[0].elems, 33);  // capacity 32
  EXPECT_EQ(plan_mqa_meta(zeros).aligned, 32);
  EXPECT_EQ(mqa_meta_needs(plan_mqa_meta(std::vector<int32_t>(31, 0)))[0].elems, 32);  // the padding
  std::vector<int32_t> one(32, 0);
  one[7] = 1;
  EXPECT_EQ(mqa_meta_needs(plan_mqa_meta(one))[0].elems, 32);
}

// SGLang #20389's probes bracket tokens x H_q x D = 2^31: 512 x 512 tokens of 32 heads of 256, or
// 256 x 512 tokens of 128 heads of 128. At exactly 2^31 elements the last offset is 2^31 - 1.
TEST(Offsets, WrapPast2To31Elements) {
  const rank_layer a{"a", attn_kind::full, 32, 2, 256, 256, 0, 0};
  const rank_layer b{"b", attn_kind::full, 128, 1, 128, 128, 0, 0};
  EXPECT_FALSE(token_offset_wraps(plan_offset_probe(512 * 512, true), a));
  EXPECT_TRUE(token_offset_wraps(plan_offset_probe(512 * 512 + 1, true), a));
  EXPECT_FALSE(token_offset_wraps(plan_offset_probe(256 * 512, true), b));
  EXPECT_TRUE(token_offset_wraps(plan_offset_probe(256 * 512 + 1, true), b));
  EXPECT_FALSE(token_offset_wraps(plan_offset_probe(512 * 512 + 1, false), a));  // 64-bit offsets
  EXPECT_EQ(largest_token_offset(plan_offset_probe(512 * 512, true), a), (int64_t{1} << 31) - 1);
}

// vLLM's q is a view of the fused qkv projection: 32 q heads and 8 kv heads of 128 give a token
// stride of (32 + 8 + 8) x 128 = 6144 elements against the output's 4096. q's last element at T
// tokens is (T - 1) x 6144 + 4095: 349524 x 6144 + 4095 = 2147479551 fits, 349525 x 6144 + 4095 =
// 2147485695 wraps, so q wraps from T = 349526; the output (T x 4096 - 1) only from T = 524289.
TEST(Offsets, FusedQkvQueryWrapsBeforeTheOutput) {
  const rank_layer l{"l", attn_kind::full, 32, 8, 128, 128, 0, 0};
  EXPECT_EQ(q_row_stride(plan_offset_probe(1, true, true), l), 6144);
  EXPECT_EQ(largest_q_offset(plan_offset_probe(349525, true, true), l), 2147479551);
  EXPECT_FALSE(token_offset_wraps(plan_offset_probe(349525, true, true), l));
  EXPECT_TRUE(token_offset_wraps(plan_offset_probe(349526, true, true), l));
  EXPECT_EQ(largest_output_offset(plan_offset_probe(524288, true, true), l), (int64_t{1} << 31) - 1);
  EXPECT_FALSE(token_offset_wraps(plan_offset_probe(524288, true, false), l));  // contiguous q
  EXPECT_TRUE(token_offset_wraps(plan_offset_probe(524289, true, false), l));
}

}  // namespace
}  // namespace headroom
