// Sizing of an engine step's metadata (docs/catalogue.md C3, C5, C6, C7), pinned with the numbers
// of the upstream sources and hand computations written out here.
#include <gtest/gtest.h>

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
  EXPECT_EQ(fa3_layout_of(1, 1, true).size(), 9);     // no dynamic split: 1 + 2 * 4
  EXPECT_EQ(fa3_layout_of(993, 16, true).nvec, 2);    // above 992 batches: no dynamic split
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
  for (auto [bmax, overflows] : {std::pair{1, true}, {2, true}, {5, true}, {3, false}, {4, false}, {6, false}}) {
    const int64_t need = fa3_layout_of(bmax, fa3_graph_max_splits, true).size();
    EXPECT_EQ(need > fa3_metadata_capacity(with(bmax, {1}), no_roundup), overflows) << "Bmax " << bmax;
    EXPECT_LE(need, fa3_metadata_capacity(with(bmax, {1}), {})) << "the fix, Bmax " << bmax;
  }
  engine_settings eager;
  eager.cg_mode = cudagraph_mode::none;  // no persistent buffer: a fresh tensor per call
  EXPECT_EQ(fa3_metadata_capacity(eager, {}), 0);
}

TEST(Fa3, SplitHeuristicAndSwizzle) {
  EXPECT_EQ(fa3_heuristic_splits(256, 8, 1, 4096), 1);  // 2048 tiles fill 132 SMs
  EXPECT_EQ(fa3_heuristic_splits(1, 8, 1, 4096), 16);   // 8 tiles: 132 / 8 splits of 32 blocks
  EXPECT_EQ(fa3_heuristic_splits(1, 8, 1, 100), 1);     // one key block
  EXPECT_TRUE(fa3_head_swizzle(1, 128, 0));   // decode stays causal for 64 < D <= 128
  EXPECT_FALSE(fa3_head_swizzle(1, 256, 0));
  EXPECT_FALSE(fa3_head_swizzle(1, 64, 0));
  EXPECT_TRUE(fa3_head_swizzle(1, 256, 1024));  // local
  EXPECT_TRUE(fa3_head_swizzle(5, 256, 0));     // causal prefill
}

// vLLM #20301: an eager batch above the largest capture size (513 tokens over 256 requests at the
// defaults) scheduled with 16 splits (3 vectors: 1 + 3 * 256 = 769) but run with the heuristic's
// one split (2 vectors: 513): FA3's CHECK_SHAPE fails. #25490 passes one value to both.
TEST(Fa3, ScheduleAndRunSplitsDiffer) {
  batch b;
  for (int i = 0; i < 256; ++i) b.seq_lens.push_back(i == 255 ? 3 : 2), b.query_lens.push_back(i == 255 ? 3 : 2);
  const engine_step st = forward_step(engine_settings{}, b);
  fa3_mutants bug;
  bug.split_mismatch = true;
  const fa3_plan p = plan_fa3(engine_settings{}, st, 8, 128, 0, bug);
  EXPECT_EQ(p.sched.size(), 769);
  EXPECT_EQ(p.run_size, 513);
  const fa3_plan fixed = plan_fa3(engine_settings{}, st, 8, 128, 0, {});
  EXPECT_EQ(fixed.sched.size(), fixed.run_size);
}

// SGLang's own test: get_cuda_graph_max_batch_size(args, 65) == 68 with attention TP 4 under
// require_gathered_buffer. #40668: attention TP 8 without the gather, pool 100, graphs up to 100:
// graph ceiling 100, eager ceiling 104, the graph-sized buffers 4 entries short.
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
  // #25124: sized by the pool (100) while graphs pad to the largest capture size (200 by default).
  engine_settings pool = with(100);
  pool.flavour = engine_flavour::sglang;
  EXPECT_EQ(request_meta_rows(pool, {true, false, false}), 100);
  EXPECT_EQ(request_meta_rows(pool, {}), 200);
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

}  // namespace
}  // namespace headroom
