// C2 on the released Gemma 4 checkpoints (configs/gemma4-*.json): the Triton builder's first
// failing decode batch per TP under the two C2 mutants, computed by hand below, and the simulator
// agreeing with the formulas on the first failing batch's replayable case.
//
// Engine defaults of `headroom check`: max_num_seqs 256, FULL_AND_PIECEWISE graphs, capture sizes
// 1, 2, 4, 8..248 step 8, 256..512 step 16; decode requests of 256 tokens, so all 16 segments run.
// Only the full-attention group differs from the model-wide values (head size 512 vs 256, kv heads
// 2 or 4 vs 8 or 16); the sliding groups match them and stay clean.
//
// triton-model-head-size: segm_output is [thr][H][16][next_pow2(256) = 256] but a full layer writes
// rows of 512: T requests need T*H*16*512 floats against thr*H*16*256, so batch T fails iff
// 2T > thr, first at thr/2 + 1 (T <= thr keeps the 3D path). thr = snap(128 // KV_group):
//   26B, KV_group = max(1, 2/tp):  tp 1: 64 -> 33;  tp 2, 4, 8: 128 -> 65
//   31B, KV_group = max(1, 4/tp):  tp 1: 32 -> 17;  tp 2: 64 -> 33;  tp 4, 8: 128 -> 65
// triton-model-kv-heads: thr from the model's kv heads (8/tp or 16/tp, at least 1), buffers sized
// to match, so nothing overflows; batches min(thr_used, thr_group) + 1 .. max take the other path:
//   26B: used 16, 32, 64, 128 vs group 64, 128, 128, 128 -> 17, 33, 65, none
//   31B: used 8, 16, 32, 64 vs group 32, 64, 128, 128    -> 9, 17, 33, 65 (#54191: tp 4, 32 vs 128)
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/check/check.hpp"
#include "core/model/loader.hpp"
#include "targets/sim/sim_executor.hpp"

namespace headroom {
namespace {

model_geometry gemma4(const std::string& name) {
  return load_model(std::string(HEADROOM_SOURCE_DIR) + "/configs/" + name);
}

report check(const model_geometry& m, const std::string& mutant) {
  check_options o;
  o.tps = {1, 2, 4, 8};
  o.backends = {backend::triton};
  o.mutants = {mutant};
  model_executor ex;
  return run_check(m, o, ex);
}

// The attention group index of the full-attention layers (layer 5 is full in both models).
int full_group(const report& r, int64_t tp) {
  for (const auto& v : r.violations)
    if (v.tp == tp && std::count(v.layers.begin(), v.layers.end(), "model.layers.5.self_attn.attn"))
      return v.group;
  return -1;
}

// tp -> first failing decode batch of the full group; every other group must be clean.
std::map<int64_t, int64_t> overflow_thresholds(const report& r) {
  std::map<int64_t, int64_t> out;
  for (const auto& t : r.thresholds) {
    if (!t.variable.empty()) continue;
    if (t.group != full_group(r, t.tp)) {
      EXPECT_FALSE(t.min_failing_decode_batch) << "tp " << t.tp << " group " << t.group;
      continue;
    }
    if (t.min_failing_decode_batch) out[t.tp] = *t.min_failing_decode_batch;
  }
  return out;
}

std::map<int64_t, int64_t> path_thresholds(const report& r) {
  std::map<int64_t, int64_t> out;
  for (const auto& t : r.thresholds) {
    EXPECT_FALSE(t.min_failing_decode_batch) << "the kv mutant overflows nothing";
    if (t.cls == bug_class::c2 && t.variable == "decode_batch") {
      EXPECT_EQ(t.group, full_group(r, t.tp));
      out[t.tp] = t.min_failing;
    }
  }
  return out;
}

TEST(Gemma4, HeadSizeMutantThresholds) {
  const auto a = check(gemma4("gemma4-26b-a4b.json"), "triton-model-head-size");
  EXPECT_EQ(overflow_thresholds(a), (std::map<int64_t, int64_t>{{1, 33}, {2, 65}, {4, 65}, {8, 65}}));
  const auto b = check(gemma4("gemma4-31b.json"), "triton-model-head-size");
  EXPECT_EQ(overflow_thresholds(b), (std::map<int64_t, int64_t>{{1, 17}, {2, 33}, {4, 65}, {8, 65}}));
  for (const auto& v : a.violations) EXPECT_EQ(v.cls, bug_class::c2) << v.detail;
}

TEST(Gemma4, KvHeadsMutantPathThresholds) {
  const auto a = check(gemma4("gemma4-26b-a4b.json"), "triton-model-kv-heads");
  EXPECT_EQ(path_thresholds(a), (std::map<int64_t, int64_t>{{1, 17}, {2, 33}, {4, 65}}));
  const auto b = check(gemma4("gemma4-31b.json"), "triton-model-kv-heads");
  EXPECT_EQ(path_thresholds(b), (std::map<int64_t, int64_t>{{1, 9}, {2, 17}, {4, 33}, {8, 65}}));
}

TEST(Gemma4, TheFixIsClean) {
  for (const char* name : {"gemma4-26b-a4b.json", "gemma4-31b.json", "gemma4-26b-a4b-per-layer.json"}) {
    check_options o;
    o.tps = {1, 2, 4, 8};
    model_executor ex;
    EXPECT_TRUE(run_check(gemma4(name), o, ex).ok) << name;
  }
}

// The simulator runs the kernels on the replayable case of the first failing batch at tp 1 and
// touches exactly the bytes the formulas need; one request fewer fits. 26B: thr 64, H 16, batch 33;
// 31B: thr 32, H 32, batch 17.
TEST(Gemma4, SimulatorAgreesOnTheFirstFailingBatch) {
  struct expected {
    const char* config;
    int64_t thr, heads, first;
  };
  for (const expected e :
       {expected{"gemma4-26b-a4b.json", 64, 16, 33}, expected{"gemma4-31b.json", 32, 32, 17}}) {
    SCOPED_TRACE(e.config);
    const auto r = check(gemma4(e.config), "triton-model-head-size");
    const auto v =
        std::find_if(r.violations.begin(), r.violations.end(), [](const violation& x) { return x.tp == 1; });
    ASSERT_NE(v, r.violations.end());
    ASSERT_EQ(v->shell.b.num_seqs(), e.first);
    const int64_t capacity = e.thr * e.heads * 16 * 256 * 4, need = e.first * e.heads * 16 * 512 * 4;
    EXPECT_EQ(v->capacity_bytes, capacity);
    EXPECT_EQ(v->required_bytes, need);
    sim_executor sim;
    const report s = run_case(case_of(*v), sim);
    bool seen = false;
    for (const auto& x : s.violations)
      if (x.inv == invariant::out_of_bounds && x.buffer == "segm_output") {
        seen = true;
        EXPECT_EQ(x.capacity_bytes, capacity);
        EXPECT_EQ(x.required_bytes, need);  // touched, observed by the simulator
        EXPECT_EQ(x.group, v->group);
      }
    EXPECT_TRUE(seen);
    check_case fits = case_of(*v);
    fits.b = decode_batch(e.first - 1, 256);
    const report f = run_case(fits, sim);
    EXPECT_TRUE(f.ok) << (f.violations.empty() ? "" : f.violations.front().detail);
  }
}

}  // namespace
}  // namespace headroom
