// C3 under --engine-flavour sglang --backend fa3: whole-model checks on the formulas and the
// simulator check SGLang's own decode schedule (config geometry over TP for every non-sliding
// layer, core/backends/fa3_sglang.hpp), while the vllm flavour keeps vLLM's per-group builder.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/check/check.hpp"
#include "targets/sim/sim_executor.hpp"
#include "tests/support/laguna.hpp"

namespace headroom {
namespace {

struct both_reports {
  report model, sim;
};

both_reports check_fa3(const model_geometry& m, const engine_settings& e) {
  check_options o;
  o.backends = {backend::fa3};
  o.engine = e;
  o.max_num_seqs = e.max_num_seqs;
  model_executor model;
  sim_executor sim;
  return {run_check(m, o, model), run_check(m, o, sim)};
}

bool has_c3(const report& r, invariant inv, const std::string& buffer) {
  return std::any_of(r.violations.begin(), r.violations.end(), [&](const violation& v) {
    return v.cls == bug_class::c3 && v.inv == inv && v.buffer == buffer;
  });
}

int64_t first_failing(const report& r, const std::string& variable) {
  int64_t v = -1;
  for (const auto& t : r.thresholds)
    if (t.cls == bug_class::c3 && t.variable == variable && (v < 0 || t.min_failing < v)) v = t.min_failing;
  return v;
}

engine_settings sglang_settings() {
  engine_settings e;
  e.flavour = engine_flavour::sglang;
  e.max_num_seqs = 8;
  return e;
}

// Config 4 q heads, 1 kv head, head_dim 128; layer 1 has head size 256 (its own KV-cache group),
// either full or sliding (window 512).
model_geometry wide_second_layer(attn_kind kind) {
  model_geometry m = testing::uniform(2, 4, 1, 128);
  m.layers[1].head_size = m.layers[1].head_size_v = 256;
  m.layers[1].kind = kind;
  m.layers[1].sliding_window = kind == attn_kind::sliding ? 512 : 0;
  return m;
}

// Every layer has the config's geometry: SGLang's schedule is each layer's, clean everywhere.
TEST(Fa3SglangCheck, HomogeneousModelIsClean) {
  const both_reports r = check_fa3(testing::uniform(2, 8, 1, 128), sglang_settings());
  EXPECT_TRUE(r.model.violations.empty());
  EXPECT_TRUE(r.sim.violations.empty());
}

// The full layer of head size 256 drops causal on one-token decode, the config's 128 keeps it:
// one request is scheduled into 1 + 4 x 4 = 17 entries and run expecting 1 + 3 x 4 = 13
// (fa3_sglang_test.cpp), so the first decode batch (replaying the graph of 1) fails CHECK_SHAPE,
// and so do the other 7 batches and the 4 captures (1, 2, 4, 8): 12 steps.
TEST(Fa3SglangCheck, FullLayerOfAnotherHeadSizeFailsTheShape) {
  const both_reports r = check_fa3(wide_second_layer(attn_kind::full), sglang_settings());
  EXPECT_TRUE(has_c3(r.model, invariant::plan_run_shape, "scheduler_metadata"));
  EXPECT_TRUE(has_c3(r.sim, invariant::plan_run_shape, "scheduler_metadata"));
  EXPECT_EQ(first_failing(r.model, "decode_batch"), 1);
  ASSERT_EQ(r.model.violations.size(), 1u);
  const violation& v = r.model.violations[0];
  EXPECT_EQ(v.capacity_bytes, 4 * 17);
  EXPECT_EQ(v.required_bytes, 4 * 13);
  EXPECT_EQ(v.detail.rfind("SGLang decode graph replay", 0), 0u) << v.detail;
  EXPECT_NE(v.detail.find("(12 steps fail)"), std::string::npos) << v.detail;
}

// The same model under the vllm flavour: vLLM's builder plans each group with its own head size,
// so the layer of 256 is scheduled for 256 and nothing fails.
TEST(Fa3SglangCheck, VllmFlavourKeepsThePerGroupBuilder) {
  engine_settings e = sglang_settings();
  e.flavour = engine_flavour::vllm;
  const both_reports r = check_fa3(wide_second_layer(attn_kind::full), e);
  EXPECT_TRUE(r.model.violations.empty());
  EXPECT_TRUE(r.sim.violations.empty());
}

// Sliding layers pass no scheduler metadata (forward_decode), so FA3 schedules them itself.
TEST(Fa3SglangCheck, SlidingLayerOfAnotherHeadSizeIsClean) {
  const both_reports r = check_fa3(wide_second_layer(attn_kind::sliding), sglang_settings());
  EXPECT_TRUE(r.model.violations.empty());
  EXPECT_TRUE(r.sim.violations.empty());
}

// Under DP attention (attention TP 2) SGLang skips the precompute: nothing to disagree with.
TEST(Fa3SglangCheck, DpAttentionSkipsThePrecompute) {
  engine_settings e = sglang_settings();
  e.attn_tp_size = 2;
  const both_reports r = check_fa3(wide_second_layer(attn_kind::full), e);
  EXPECT_TRUE(r.model.violations.empty());
  EXPECT_TRUE(r.sim.violations.empty());
}

}  // namespace
}  // namespace headroom
