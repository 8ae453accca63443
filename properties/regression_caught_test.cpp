// The regression must be caught: with builders sized from the model-wide count (vLLM
// #43241), a capacity property fails within its ci budget and the shrunk counterexample is
// minimal: at most 2 layers and exactly one overflowing attention group. Checked twice: through
// RapidCheck (its runner, our shrinker) and through the fuzzer's own search + shrink, on the model
// and on the simulator.
#include <nlohmann/json.hpp>

#include "core/check/check.hpp"
#include "generators/case_gen.hpp"
#include "generators/search.hpp"
#include "properties/support/engine_view.hpp"
#include "properties/support/prop_check.hpp"
#include "properties/support/profiles.hpp"

namespace headroom {
namespace {

bool is_capacity(invariant i) { return i == invariant::buffer_capacity || i == invariant::out_of_bounds; }

// The property the regression breaks: no run of the case needs more than its buffer holds.
void no_capacity_failure(const check_case& c) {
  model_executor model;
  for (const auto& v : run_case(c, model).violations)
    if (is_capacity(v.inv)) RC_FAIL(v.detail);
}

void expect_minimal(const check_case& c, executor& ex) {
  const report r = run_case(c, ex);
  EXPECT_LE(c.model.layers.size(), 2u) << to_json(c).dump();
  EXPECT_EQ(generators::overflowing_groups(r), 1) << to_json(r).dump();
}

TEST(RegressionCaught, RapidCheckFindsAndShrinksModelWide) {
  const auto p = props::regressed();
  const auto r = props::run([p] { no_capacity_failure(*generators::cases(p)); }, {200, 0, 100});
  ASSERT_TRUE(props::is_failure(r)) << "model-wide was not caught within 200 cases";
  const std::string json = props::counterexample_case_json(r);
  ASSERT_FALSE(json.empty());
  const check_case c = case_from_json(nlohmann::json::parse(json), "counterexample");
  std::cout << "shrunk counterexample: " << json << "\n";
  model_executor model;
  expect_minimal(c, model);
}

// The fuzzer's path: sample until a capacity failure, then shrink it on the same target.
void fuzz_finds_and_shrinks(executor& ex, int budget) {
  const uint64_t seed = props::current().seed;
  for (int i = 0; i < budget; ++i) {
    const check_case c = generators::sample_case(props::regressed(), seed, static_cast<uint64_t>(i));
    const report r = generators::run_guarded(c, ex);
    const auto kind = generators::primary_failure(r);
    if (!kind || !is_capacity(kind->inv)) continue;
    const generators::counterexample f = generators::shrink_failure(c, r, ex);
    std::cout << ex.name() << ": case " << i << " failed (" << f.signature << "), shrunk in "
              << f.shrink_steps << " steps to " << to_json(f.shrunk).dump() << "\n";
    expect_minimal(f.shrunk, ex);
    return;
  }
  FAIL() << "no capacity failure in " << budget << " model-wide cases (seed " << seed << ")";
}

TEST(RegressionCaught, FuzzerFindsAndShrinksOnTheModel) {
  model_executor model;
  fuzz_finds_and_shrinks(model, 200);
}

TEST(RegressionCaught, FuzzerFindsAndShrinksOnTheSimulator) {
  auto sim = props::make_sim();
  fuzz_finds_and_shrinks(*sim, 200);
}

}  // namespace
}  // namespace headroom
