// The checker on the model target: Laguna XS.2 thresholds, the fix, the legacy grouping, the
// fallback, a uniform model, the FlashInfer decode overflow.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/check/check.hpp"
#include "core/util/error.hpp"
#include "tests/support/laguna.hpp"

namespace headroom {
namespace {

report check(const model_geometry& m, policy p, grouping g, std::vector<backend> bes,
             std::vector<int64_t> tps = {1, 2, 4, 8}) {
  check_options o;
  o.tps = tps;
  o.pol = p;
  o.grp = g;
  o.backends = bes;
  model_executor ex;
  return run_check(m, o, ex);
}

bool has(const report& r, const std::string& name) {
  return std::any_of(r.violations.begin(), r.violations.end(),
                     [&](const violation& v) { return to_string(v.inv) == name; });
}

TEST(Check, LagunaTritonModelWideThresholds) {
  auto r = check(testing::laguna_xs2(), policy::model_wide, grouping::heads, {backend::triton});
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(has(r, "buffer_capacity"));
  std::map<int64_t, int64_t> min_fail;  // tp -> smallest failing batch over groups
  for (const auto& t : r.thresholds) {
    if (t.layer_heads == t.builder_heads) {
      EXPECT_FALSE(t.min_failing_decode_batch.has_value()) << "full-attention group must fit";
      continue;
    }
    ASSERT_TRUE(t.min_failing_decode_batch.has_value());
    EXPECT_EQ(t.builder_heads * 4, t.layer_heads * 3);
    min_fail[t.tp] = *t.min_failing_decode_batch;
  }
  EXPECT_EQ(min_fail, (std::map<int64_t, int64_t>{{1, 13}, {2, 25}, {4, 49}, {8, 97}}));
}

// At tp 1 the 3D path serves batches up to thr = 16; batches 13..16 overflow segm_output (64 x T
// rows against 48 x 16 planned), 17 and above take the 2D path: exactly 4 failing batches.
TEST(Check, LagunaTritonTp1FailsFrom13To16) {
  auto r = check(testing::laguna_xs2(), policy::model_wide, grouping::heads, {backend::triton}, {1});
  int with_count = 0;
  for (const auto& v : r.violations)
    if (v.buffer == "segm_output") {
      EXPECT_NE(v.detail.find("(4 batches fail)"), std::string::npos) << v.detail;
      ++with_count;
    }
  EXPECT_EQ(with_count, 3);  // the three 64-head sliding groups
}

TEST(Check, LagunaViolationCarriesAReplayableCase) {
  auto r = check(testing::laguna_xs2(), policy::model_wide, grouping::heads, {backend::triton}, {1});
  ASSERT_FALSE(r.violations.empty());
  const auto& v = r.violations.front();
  EXPECT_EQ(v.buffer, "segm_output");
  EXPECT_EQ(v.capacity_bytes, 16LL * 48 * 16 * 128 * 4);
  EXPECT_EQ(v.required_bytes, 13LL * 64 * 16 * 128 * 4);
  EXPECT_EQ(v.shell.b.num_seqs(), 13);
  model_executor ex;
  auto again = run_case(case_of(v), ex);
  EXPECT_FALSE(again.ok);
}

// A model of many layers with many violations is held once: every violation of a whole-model check
// shares the model its case replays with (a copy per violation grew memory and the report as
// violations x layers: 300 layers of distinct heads took 1.4 GB).
TEST(Check, ViolationsShareTheirModel) {
  model_geometry m;
  m.name = "wide";
  m.num_attention_heads = 8, m.num_kv_heads = 8, m.head_size = 128;
  for (int i = 0; i < 40; ++i)
    m.layers.push_back({"model.layers." + std::to_string(i) + ".self_attn.attn", attn_kind::full, 8 * (i + 1),
                        8, 128, 128, 0});
  const report r = check(m, policy::model_wide, grouping::heads, {backend::triton}, {1});
  ASSERT_GT(r.violations.size(), 39u);  // every group past the first overflows its segm_* buffers
  for (const auto& v : r.violations) {
    ASSERT_EQ(v.model.get(), r.violations.front().model.get());
    EXPECT_TRUE(v.shell.model.layers.empty());
  }
  EXPECT_EQ(case_of(r.violations.back()).model, m);
}

TEST(Check, LagunaPerLayerIsCleanEverywhere) {
  auto r = check(testing::laguna_xs2(), policy::per_layer, grouping::heads,
                 {backend::triton, backend::flashinfer});
  EXPECT_TRUE(r.ok) << (r.violations.empty() ? "" : r.violations.front().detail);
  EXPECT_EQ(r.thresholds.size(), 2u * 4u * 4u);
}

TEST(Check, LegacyGroupingTripsGroupAgreement) {
  check_options o;
  o.tps = {1};
  o.grp = grouping::legacy;
  o.hybrid = false;  // one KV-cache group holds both head counts
  model_executor ex;
  auto r = run_check(testing::laguna_xs2(), o, ex);
  EXPECT_TRUE(has(r, "group_agreement"));
}

// Model-wide heads on FlashInfer (48 planned, 64 run at TP 1). Its CUDA-core decode plan (vLLM
// before v0.10.2) sizes tmp_s for 48 heads per work item, and the run writes 64: an overflow from
// the first decode batch. On tensor cores (the prefill planner; vLLM's decode since v0.10.2 and
// check's default) each one-row request packs G_b = 6 rows into a 16-row tile whose scratch holds
// 16 x 48 rows, more than the 8 x 64 the run writes: what is left is the plan/run head mismatch.
TEST(Check, FlashInferModelWideOverflowsAndMismatches) {
  check_options o;
  o.tps = {1, 2, 4, 8};
  o.pol = policy::model_wide;
  o.backends = {backend::flashinfer};
  EXPECT_TRUE(o.flashinfer.tensor_core_decode);
  model_executor ex;
  const report tensor_cores = run_check(testing::laguna_xs2(), o, ex);
  EXPECT_TRUE(has(tensor_cores, "plan_run_heads"));
  EXPECT_FALSE(has(tensor_cores, "buffer_capacity"));
  o.flashinfer.tensor_core_decode = false;
  const report cuda_cores = run_check(testing::laguna_xs2(), o, ex);
  EXPECT_TRUE(has(cuda_cores, "buffer_capacity"));
  EXPECT_TRUE(has(cuda_cores, "plan_run_heads"));
}

TEST(Check, ProposerPathSizesFromTheFirstLayer) {
  check_options o;
  o.tps = {1};
  o.grp = grouping::proposer;
  o.hybrid = false;
  o.backends = {backend::triton};
  model_executor ex;
  auto r = run_check(testing::laguna_xs2(), o, ex);  // layer 0 has 48 heads, the rest run 64
  EXPECT_TRUE(has(r, "buffer_capacity"));
  EXPECT_FALSE(has(r, "group_agreement"));
}

TEST(Check, UniformModelIsCleanUnderEveryPolicy) {
  for (policy p : {policy::per_layer, policy::model_wide, policy::max})
    for (grouping g : {grouping::heads, grouping::legacy, grouping::proposer}) {
      auto r = check(testing::uniform(32, 32, 8, 128), p, g, {backend::triton, backend::flashinfer});
      EXPECT_TRUE(r.ok) << to_string(p) << " " << to_string(g);
    }
}

TEST(Check, TightBoundIsOptIn) {
  check_options o;
  o.tps = {1};
  o.backends = {backend::flashinfer};
  model_executor ex;
  EXPECT_TRUE(run_check(testing::uniform(4, 32, 4, 128), o, ex).ok);
  o.tight = 2.0;
  auto r = run_check(testing::uniform(4, 32, 4, 128), o, ex);
  EXPECT_TRUE(has(r, "tight_bound"));  // the prefill scratch is over-sized by about G_b
}

TEST(Check, MaxPolicyFitsTritonUnderLegacyGrouping) {
  check_options o;
  o.tps = {1, 2};
  o.pol = policy::max;
  o.grp = grouping::legacy;
  o.hybrid = false;
  o.backends = {backend::triton};
  model_executor ex;
  EXPECT_TRUE(run_check(testing::laguna_xs2(), o, ex).ok);
}

TEST(Check, MaxNumSeqsIsBounded) {
  // Decode batches 1..N are built up front: an unbounded N meant ~N^2 memory (34 GB at 65536).
  check_options o;
  o.max_num_seqs = max_check_num_seqs + 1;
  model_executor ex;
  try {
    run_check(testing::laguna_xs2(), o, ex);
    FAIL() << "max_num_seqs " << o.max_num_seqs << " was accepted";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("'max_num_seqs' = 4097"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

// One element past a buffer is a violation. By hand: a 1-head Triton builder (thr 128 // 1 =
// 128, not snapped) plans segm_max for 128 x 1 x 16 = 2048 elements; a 3-head layer with 43
// requests of 16 tokens (segment 0 only) writes up to index ((42 x 3 + 2) x 16 + 0) = 2048, so it
// needs 2049 elements: exactly one more.
TEST(Check, OneElementPastABufferIsAViolation) {
  model_geometry m;
  m.name = "one-past";
  m.num_attention_heads = 1;
  m.num_kv_heads = 1;
  m.head_size = 8;
  m.layers = {{"model.layers.0.self_attn.attn", attn_kind::full, 3, 1, 8, 8, 0}};
  check_case c = make_case(m, 1, backend::triton, policy::model_wide, grouping::heads, true, 16, 0);
  c.triton.snap_to_capture = false;
  c.b = decode_batch(43, 16);
  model_executor ex;
  const report r = run_case(c, ex);
  const auto it = std::find_if(r.violations.begin(), r.violations.end(),
                               [](const violation& v) { return v.buffer == "segm_max"; });
  ASSERT_NE(it, r.violations.end());
  EXPECT_EQ(it->capacity_bytes, 2048 * 4);
  EXPECT_EQ(it->required_bytes, 2049 * 4);
}

}  // namespace
}  // namespace headroom
