// The KV-cache layout of a case (docs/engines.md §10) reaches its runs: the sim executor uploads
// one packed buffer, every run of a case and of a check uses the case's layout, and the step
// regressions (the engine's persistent inputs, make_step_inputs) give the same verdicts on both.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/backends/triton.hpp"
#include "core/check/check.hpp"
#include "targets/sim/sim_executor.hpp"
#include "tests/support/laguna.hpp"

namespace headroom {
namespace {

rank_layer gqa_layer(int64_t head_size) {
  return {"model.layers.0.self_attn.attn", attn_kind::full, 8, 2, head_size, head_size, 0};
}

// Cases name the layout; the executor builds it: one "kv_cache" buffer of 2 x the K elements.
TEST(KvLayoutCase, ExecutorUploadsOnePackedBuffer) {
  const rank_layer l = gqa_layer(64);
  const batch b = decode_batch(2, 40);
  const any_plan plan = plan_triton(l.num_heads, l.num_kv_heads, l.head_size, {});
  run_request r;
  r.layer = &l, r.plan = &plan, r.b = &b, r.layout = kv_layout::packed;
  sim_executor ex;
  const observation o = ex.run(r);
  EXPECT_TRUE(o.output_checked);
  EXPECT_FALSE(o.output_mismatch) << o.mismatch_detail;
  int64_t kv_extent = -1;
  for (const auto& u : ex.last().buffers) {
    EXPECT_NE(u.name, "k_cache");
    EXPECT_NE(u.name, "v_cache");
    if (u.name == "kv_cache") kv_extent = u.extent;
  }
  EXPECT_EQ(kv_extent, 6 * 16 * l.num_kv_heads * 2 * l.head_size);  // 2 requests of 3 blocks, K + V
}

// The formulas, recording the layout of every run a check asks for.
class layout_recorder final : public executor {
 public:
  target_kind kind() const override { return target_kind::sim; }
  observation run(const run_request& r) override {
    seen.push_back(r.layout);
    return model_.run(r);
  }
  std::vector<kv_layout> seen;

 private:
  model_executor model_;
};

// A case's layout reaches every kernel run of its check (replay), and check's option its cases.
TEST(KvLayoutCase, EveryRunOfACaseUsesItsLayout) {
  for (kv_layout k : {kv_layout::separate, kv_layout::packed}) {
    check_case c =
        make_case(testing::laguna_xs2(), 8, backend::triton, policy::per_layer, grouping::heads, true, 16, 3);
    c.layout = k;
    c.b = decode_batch(3, 40);
    layout_recorder rec;
    run_case(c, rec);
    EXPECT_FALSE(rec.seen.empty());
    for (kv_layout s : rec.seen) EXPECT_EQ(s, k) << to_string(k);
    check_options o;
    o.layout = k;
    o.max_num_seqs = 4;
    o.backends = {backend::flashinfer};
    layout_recorder all;
    run_check(testing::laguna_xs2(), o, all);
    EXPECT_FALSE(all.seen.empty());
    for (kv_layout s : all.seen) EXPECT_EQ(s, k) << to_string(k);
  }
}

// The simulator, noting the KV-cache buffers of every run.
class kv_buffer_recorder final : public executor {
 public:
  target_kind kind() const override { return target_kind::sim; }
  observation run(const run_request& r) override {
    observation o = sim_.run(r);
    for (const auto& u : sim_.last().buffers)
      if (u.name == "k_cache" || u.name == "v_cache" || u.name == "kv_cache") names.insert(u.name);
    return o;
  }
  std::set<std::string> names;

 private:
  sim_executor sim_;
};

// The invariants a case reports on the simulator, and the KV-cache buffers its runs had.
std::pair<std::set<std::string>, std::set<std::string>> verdicts_of(const check_case& c) {
  kv_buffer_recorder ex;
  std::set<std::string> out;
  for (const auto& v : run_case(c, ex).violations) out.insert(to_string(v.inv));
  return {out, ex.names};
}

// The engine's persistent inputs (make_step_inputs: dummy runs, draft passes) in either layout: the
// step regressions report the same invariants with K and V packed, with the mutant and without.
TEST(KvLayoutCase, StepCasesGiveTheSameVerdictsOnBothLayouts) {
  int attention = 0;
  for (const char* name : {"c3-dummy-num-reqs-tokens.json", "c4-dummy-seq-lens-unclamped.json",
                           "c7-empty-work-unclamped.json", "c8-draft-reuses-verify-metadata.json"}) {
    check_case c = load_case(std::string(HEADROOM_SOURCE_DIR) + "/regressions/" + name);
    ASSERT_EQ(c.layout, kv_layout::separate) << name;  // written before the field: separate
    for (bool mutants : {true, false}) {
      if (!mutants) c.mutants.clear();
      c.layout = kv_layout::separate;
      const auto [separate, separate_buffers] = verdicts_of(c);
      c.layout = kv_layout::packed;
      const auto [packed, packed_buffers] = verdicts_of(c);
      EXPECT_EQ(packed, separate) << name << (mutants ? "" : " without its mutant");
      if (mutants) {
        EXPECT_FALSE(separate.empty()) << name;
      }
      if (separate_buffers.empty() && packed_buffers.empty()) continue;  // no attention body ran
      ++attention;
      EXPECT_EQ(separate_buffers, (std::set<std::string>{"k_cache", "v_cache"})) << name;
      EXPECT_EQ(packed_buffers, (std::set<std::string>{"kv_cache"})) << name;
    }
  }
  EXPECT_GE(attention, 4);
}

}  // namespace
}  // namespace headroom
