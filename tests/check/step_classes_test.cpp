// The catalogue's engine-step classes C3-C8 on whole-model checks: every mutant is caught on the
// formulas (buffer_capacity, plan_run_shape, index_overflow) and on the simulator (out_of_bounds,
// plan_run_shape, index_overflow), at the first failing value of its variable computed by hand in
// each test; the fixed mirror is clean on the same settings on both targets.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/check/check.hpp"
#include "targets/sim/sim_executor.hpp"
#include "tests/support/laguna.hpp"

namespace headroom {
namespace {

struct outcome {
  report model, sim;
};

outcome check_both(const model_geometry& m, backend be, const engine_settings& e, mutant_set mutants) {
  check_options o;
  o.backends = {be};
  o.engine = e;
  o.max_num_seqs = e.max_num_seqs;
  o.mutants = std::move(mutants);
  model_executor model;
  sim_executor sim;
  return {run_check(m, o, model), run_check(m, o, sim)};
}

// The smallest failing value of a class variable, -1 when none.
int64_t min_failing(const report& r, bug_class cls, const std::string& variable) {
  int64_t v = -1;
  for (const auto& t : r.thresholds)
    if (t.cls == cls && t.variable == variable && (v < 0 || t.min_failing < v)) v = t.min_failing;
  return v;
}

bool has(const report& r, bug_class cls, invariant inv, const std::string& buffer = "") {
  return std::any_of(r.violations.begin(), r.violations.end(), [&](const violation& v) {
    return v.cls == cls && v.inv == inv && (buffer.empty() || v.buffer == buffer);
  });
}

engine_settings with(int64_t max_num_seqs) {
  engine_settings e;
  e.max_num_seqs = max_num_seqs;
  return e;
}

const model_geometry small = testing::uniform(2, 4, 1, 64);
// Head size 128: FA3 keeps one-token decode causal (head swizzle), three vectors with the split.
const model_geometry fa3_model = testing::uniform(2, 4, 1, 128);

// max_num_seqs 256: capacity 257 (#33841). Decode batch 80 replays the graph of 80: 1 + 3 * 80 =
// 241 entries; 81 replays 88: 1 + 3 * 88 = 265 > 257.
TEST(Classes, Fa3OldLayout) {
  const auto r = check_both(fa3_model, backend::fa3, with(256), {"fa3-metadata-old-layout"});
  EXPECT_EQ(min_failing(r.model, bug_class::c3, "decode_batch"), 81);
  EXPECT_TRUE(has(r.model, bug_class::c3, invariant::buffer_capacity, "scheduler_metadata"));
  EXPECT_TRUE(has(r.sim, bug_class::c3, invariant::out_of_bounds, "scheduler_metadata"));
  const auto fixed = check_both(fa3_model, backend::fa3, with(256), {});
  EXPECT_TRUE(fixed.model.ok && fixed.sim.ok);
}

// A config of 1 query head and 1 kv head whose layer has 8 of each: vLLM's builder as at 6adad087
// (model-wide-heads) asks FA3 to schedule 1 query head over the group's 8 kv heads, and
// mha_fwd_get_scheduler_metadata raises (found on FA3's own scheduler by the engine target). No
// metadata is checked, the report says why, and nothing else changes; the group's own 8 query heads
// (the builder since #53002), or a config of 8, get no such note.
TEST(Classes, Fa3RefusesAScheduleOfFewerQueryThanKvHeads) {
  model_geometry m = testing::uniform(1, 8, 8, 128);
  m.num_attention_heads = 1, m.num_kv_heads = 1;
  const auto r = check_both(m, backend::fa3, with(1), {"fa3-metadata-no-roundup", "model-wide-heads"});
  for (const report* rep : {&r.model, &r.sim}) {
    EXPECT_FALSE(has(*rep, bug_class::c3, invariant::buffer_capacity));
    EXPECT_TRUE(std::any_of(rep->notes.begin(), rep->notes.end(), [](const std::string& n) {
      return n.find(
                 "fa3 tp 1 group 0: FA3's get_scheduler_metadata refuses vLLM's schedule call (the "
                 "builder's 1 query heads per rank over the group's 8 kv heads") != std::string::npos;
    }));
  }
  const auto group = check_both(m, backend::fa3, with(1), {"fa3-metadata-no-roundup"});
  EXPECT_EQ(min_failing(group.model, bug_class::c3, "decode_batch"), 1);
  EXPECT_TRUE(std::none_of(group.model.notes.begin(), group.model.notes.end(),
                           [](const std::string& n) { return n.find("refuses") != std::string::npos; }));
  m.num_attention_heads = 8;
  const auto whole = check_both(m, backend::fa3, with(1), {"fa3-metadata-no-roundup"});
  EXPECT_EQ(min_failing(whole.model, bug_class::c3, "decode_batch"), 1);
  EXPECT_TRUE(std::none_of(whole.model.notes.begin(), whole.model.notes.end(),
                           [](const std::string& n) { return n.find("refuses") != std::string::npos; }));
}

// vLLM's builder schedules FA3 ahead of time only when the model's attention layers share one window
// config (_get_sliding_window_configs). Laguna XS.2 has two, (-1, -1) and (511, 0), so the 48-head
// schedule the model-wide-heads builder would give its 64-head sliding layers is never made: no C3
// finding, and a note per group. With every layer's window 512 the schedule is made, and the mutant's
// 48-head schedule under 64-head layers is plan_run_shape again; the fixed builder is clean on both.
TEST(Classes, Fa3SchedulesOnlyAModelOfOneWindow) {
  check_options o;
  o.backends = {backend::fa3};
  o.mutants = {"model-wide-heads"};
  model_executor model;
  const report two = run_check(testing::laguna_xs2(), o, model);
  EXPECT_FALSE(has(two, bug_class::c3, invariant::plan_run_shape));
  EXPECT_TRUE(two.ok);
  EXPECT_TRUE(std::any_of(two.notes.begin(), two.notes.end(), [](const std::string& n) {
    return n.find("fa3 tp 1 group 1: vLLM makes no ahead-of-time FA3 schedule") != std::string::npos;
  }));
  model_geometry one = testing::laguna_xs2();
  for (auto& l : one.layers) l.kind = attn_kind::sliding, l.sliding_window = 512;
  const report r = run_check(one, o, model);
  EXPECT_TRUE(has(r, bug_class::c3, invariant::plan_run_shape));
  EXPECT_TRUE(std::none_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("ahead-of-time") != std::string::npos;
  }));
  o.mutants = {};
  EXPECT_TRUE(run_check(one, o, model).ok);
  EXPECT_TRUE(run_check(testing::laguna_xs2(), o, model).ok);
}

// max_num_seqs 1 (graphs of 1 and 2): #23465's 4 * 2 + 1 = 9 entries, one request needs 13.
TEST(Classes, Fa3NoRoundup) {
  const auto r = check_both(fa3_model, backend::fa3, with(1), {"fa3-metadata-no-roundup"});
  EXPECT_EQ(min_failing(r.model, bug_class::c3, "decode_batch"), 1);
  EXPECT_TRUE(has(r.sim, bug_class::c3, invariant::out_of_bounds, "scheduler_metadata"));
}

// The eager batch of 513 tokens (largest graph 512) scheduled with 16 splits, run with the
// heuristic's: plan_run_shape on every target.
TEST(Classes, Fa3SplitMismatch) {
  const auto r = check_both(fa3_model, backend::fa3, with(256), {"fa3-split-mismatch"});
  EXPECT_EQ(min_failing(r.model, bug_class::c3, "tokens"), 513);
  EXPECT_TRUE(has(r.sim, bug_class::c3, invariant::plan_run_shape));
}

// cudagraph_mode full, max_num_seqs 8 (graphs 1, 2, 4, 8, 16): before #19171 the dummy of 16
// tokens builds 16 rows; the persistent rows hold 8 (query_start_loc 9).
TEST(Classes, DummyRowsPastMaxNumSeqs) {
  engine_settings e = with(8);
  e.cg_mode = cudagraph_mode::full;
  for (backend be : {backend::triton, backend::flashinfer, backend::fa3}) {
    const auto r = check_both(small, be, e, {"dummy-num-reqs-tokens"});
    EXPECT_EQ(min_failing(r.model, bug_class::c3, "capture_size"), 16) << to_string(be);
    EXPECT_TRUE(has(r.sim, bug_class::c3, invariant::out_of_bounds)) << to_string(be);
    const auto fixed = check_both(small, be, e, {});
    EXPECT_TRUE(fixed.model.ok && fixed.sim.ok) << to_string(be);
  }
}

// The derived minimal C4 case: block 16, max_model_len 128 (8 blocks a row), max_num_seqs 68
// (graphs up to 136), cudagraph_mode full: the warm-up of 136 gives 68 requests of 136 tokens = 9
// blocks, the last row's read past the table.
TEST(Classes, DummySeqLensUnclamped) {
  engine_settings e = with(68);
  e.max_model_len = 128;
  e.cg_mode = cudagraph_mode::full;
  const auto r = check_both(small, backend::triton, e, {"dummy-seq-lens-unclamped"});
  EXPECT_EQ(min_failing(r.model, bug_class::c4, "capture_size"), 136);
  EXPECT_TRUE(has(r.model, bug_class::c4, invariant::buffer_capacity, "block_table"));
  EXPECT_TRUE(has(r.sim, bug_class::c4, invariant::out_of_bounds, "block_table"));
  const auto fixed = check_both(small, backend::triton, e, {});
  EXPECT_TRUE(fixed.model.ok && fixed.sim.ok);
}

// vLLM #53658's reproductions on the formulas: max_model_len 4096 (256 blocks of 16): the graph of
// 4096 is clean, 4097 and 4128 need 257 and 258; max_model_len 1024 (64): 1032 needs 65.
TEST(Classes, DummySeqLensUpstreamSizes) {
  engine_settings e = with(256);
  e.cg_mode = cudagraph_mode::full;
  e.capture_sizes = {4096, 4097, 4128};
  check_options o;
  o.backends = {backend::triton};
  o.engine = e;
  o.mutants = {"dummy-seq-lens-unclamped"};
  model_executor model;
  EXPECT_EQ(min_failing(run_check(small, o, model), bug_class::c4, "capture_size"), 4097);
  o.engine.max_model_len = 1024;
  o.engine.capture_sizes = {1024, 1032};
  EXPECT_EQ(min_failing(run_check(small, o, model), bug_class::c4, "capture_size"), 1032);
}

engine_settings sglang(int64_t pool, int64_t attn_tp) {
  engine_settings e = with(pool);
  e.flavour = engine_flavour::sglang;
  e.attn_tp_size = attn_tp;
  return e;
}

// SGLang #25124 on SGLang's own numbers: pool 65, attention TP 4 under require_gathered_buffer.
// Capture sizes stop at round_up(65, 4) = 68 (vLLM's default list to 128 is cut there, 68 added):
// decode batch 64 replays the graph of 64, 65 the graph of 68 > 65 pool-sized rows.
TEST(Classes, RequestMetaFromPool) {
  engine_settings e = sglang(65, 4);
  e.gathered_buffer = true;
  const auto r = check_both(small, backend::flashinfer, e, {"request-meta-from-pool"});
  EXPECT_EQ(min_failing(r.model, bug_class::c5, "decode_batch"), 65);
  EXPECT_TRUE(has(r.sim, bug_class::c5, invariant::out_of_bounds, "paged_kv_indptr"));
  const auto fixed = check_both(small, backend::flashinfer, e, {});
  EXPECT_TRUE(fixed.model.ok && fixed.sim.ok);
}

// Pool 100 without the gather: no graph exceeds the pool, so sizing by the pool is right.
TEST(Classes, RequestMetaFromPoolWithoutRounding) {
  const auto r = check_both(small, backend::flashinfer, sglang(100, 1), {"request-meta-from-pool"});
  EXPECT_TRUE(r.model.ok && r.sim.ok);
}

// SGLang #40668: attention TP 8 without the gather, pool 100, graphs up to 100: the warm-up of 100
// pads eagerly to 104 against buffers of the graph ceiling (100 + 1).
TEST(Classes, RequestMetaGraphCeiling) {
  engine_settings e = sglang(100, 8);
  e.capture_sizes = {1, 2, 4, 8, 100};
  const auto r = check_both(small, backend::flashinfer, e, {"request-meta-graph-ceiling"});
  EXPECT_EQ(min_failing(r.model, bug_class::c5, "capture_size"), 100);
  EXPECT_TRUE(has(r.sim, bug_class::c5, invariant::out_of_bounds, "paged_kv_indptr"));
  const auto fixed = check_both(small, backend::flashinfer, e, {});
  EXPECT_TRUE(fixed.model.ok && fixed.sim.ok);
}

// vllm-ascend #16168, max_num_seqs 4 (graphs 1, 2, 4, 8): decode batch 3 replays the graph of 4,
// plus the dummy request 5 rows against 4.
TEST(Classes, RequestMetaMaxNumSeqs) {
  engine_settings e = with(4);
  e.flavour = engine_flavour::vllm_ascend;
  const auto r = check_both(small, backend::flashinfer, e, {"request-meta-max-num-seqs"});
  EXPECT_EQ(min_failing(r.model, bug_class::c5, "decode_batch"), 3);
  EXPECT_TRUE(has(r.sim, bug_class::c5, invariant::out_of_bounds, "paged_kv_last_page_len"));
  const auto fixed = check_both(small, backend::flashinfer, e, {});
  EXPECT_TRUE(fixed.model.ok && fixed.sim.ok);
}

// 2 q heads and 1 kv head of 256: q, a view of the fused qkv projection, has a token stride of
// (2 + 1 + 1) x 256 = 1024. Its last element at 2^21 tokens is (2^21 - 1) x 1024 + 511 = 2^31 -
// 513; one more token reaches 2^31 + 511 and wraps (the output alone would fit up to 2^22 tokens).
TEST(Classes, Int32TokenOffsets) {
  const model_geometry big = testing::uniform(1, 2, 1, 256);
  const int64_t fits = int64_t{1} << 21;
  engine_settings e = with(4);
  e.max_num_batched_tokens = fits + 1;
  const auto r = check_both(big, backend::triton, e, {"int32-token-offsets"});
  EXPECT_EQ(min_failing(r.model, bug_class::c6, "tokens"), fits + 1);
  EXPECT_TRUE(has(r.sim, bug_class::c6, invariant::index_overflow));
  const auto fixed = check_both(big, backend::triton, e, {});
  EXPECT_TRUE(fixed.model.ok && fixed.sim.ok);
  e.max_num_batched_tokens = fits;
  EXPECT_TRUE(check_both(big, backend::triton, e, {"int32-token-offsets"}).model.ok);
}

// A layer with compression ratio 4, max_num_seqs 32: the decode captures' dummies (seq_len 1) have
// no work; 32 of them read prefix_sum[32] past 32 entries.
TEST(Classes, EmptyWorkUnclamped) {
  model_geometry m = small;
  m.layers[0].compress_ratio = 4;
  for (backend be : {backend::triton, backend::flashinfer}) {
    const auto r = check_both(m, be, with(32), {"empty-work-unclamped"});
    EXPECT_EQ(min_failing(r.model, bug_class::c7, "capture_size"), 32) << to_string(be);
    EXPECT_TRUE(has(r.sim, bug_class::c7, invariant::out_of_bounds, "shared:prefix_sum")) << to_string(be);
    const auto fixed = check_both(m, be, with(32), {});
    EXPECT_TRUE(fixed.model.ok && fixed.sim.ok) << to_string(be);
  }
}

// Two speculative tokens, PIECEWISE graphs (no capture's draft pass): draft pass 2 keeps
// query_start_loc [0, 3] over a q of 1 row.
TEST(Classes, DraftReusesVerifyMetadata) {
  engine_settings e = with(4);
  e.num_speculative_tokens = 2;
  e.cg_mode = cudagraph_mode::piecewise;
  const auto r = check_both(small, backend::triton, e, {"draft-reuses-verify-metadata"});
  EXPECT_EQ(min_failing(r.model, bug_class::c8, "draft_pass"), 2);
  EXPECT_TRUE(has(r.sim, bug_class::c8, invariant::plan_run_shape));
  EXPECT_TRUE(has(r.sim, bug_class::c8, invariant::out_of_bounds, "q"));
  const auto fixed = check_both(small, backend::triton, e, {});
  EXPECT_TRUE(fixed.model.ok && fixed.sim.ok);
}

// vllm-musa #198: EAGLE-3 with one speculative token under FULL_DECODE_ONLY. The capture runs the
// verify pass (2 rows a request), then the drafter's one-token pass (pass 0): keeping the verify
// metadata it has query_start_loc [0, 2] over a q of 1 row. There is no pass 2 for the mutant to
// break, so before pass 0 existed the mutant was silent at k = 1.
TEST(Classes, CaptureDraftPassReusesVerifyMetadata) {
  engine_settings e = with(4);
  e.num_speculative_tokens = 1;
  e.cg_mode = cudagraph_mode::full_decode_only;
  const auto r = check_both(small, backend::triton, e, {"draft-reuses-verify-metadata"});
  EXPECT_EQ(min_failing(r.model, bug_class::c8, "draft_pass"), 0);
  EXPECT_TRUE(has(r.sim, bug_class::c8, invariant::plan_run_shape));
  EXPECT_TRUE(has(r.sim, bug_class::c8, invariant::out_of_bounds, "q"));
  const auto fixed = check_both(small, backend::triton, e, {});
  EXPECT_TRUE(fixed.model.ok && fixed.sim.ok);
  e.cg_mode = cudagraph_mode::piecewise;  // no capture: no pass 0, and k = 1 has no pass 2
  EXPECT_TRUE(check_both(small, backend::triton, e, {"draft-reuses-verify-metadata"}).model.ok);
}

}  // namespace
}  // namespace headroom
