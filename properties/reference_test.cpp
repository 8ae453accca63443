// Property: the simulator's output equals the fp32 reference (within the dtype's tolerance) for
// every run that stays in bounds and computes every row (a prefill plan for fewer heads per kv head
// than the layer has leaves rows no tile covers: the formulas say which, prop.model_sim holds the
// simulator to them), with no read of never-written memory and no shared-memory race;
// and under the fix every run stays in bounds, so the engine's output is right. The second fails
// for the regression.
#include "core/check/check.hpp"
#include "properties/support/engine_view.hpp"
#include "properties/support/paired.hpp"
#include "properties/support/prop_check.hpp"
#include "properties/support/profiles.hpp"

namespace headroom {
namespace {

// Runs the case through the simulator; returns the runs it made.
std::vector<props::run_record> simulate(const check_case& c) {
  auto sim = props::make_sim();
  model_executor model;
  props::paired_executor paired(model, *sim);
  run_case(c, paired);
  return paired.records();
}

std::string where(const check_case& c, const props::run_record& r) {
  return std::string(to_string(c.be)) + " " + r.plan + " run, layer " + std::to_string(r.layer_heads) +
         " heads, builder " + std::to_string(r.builder_heads) + ": ";
}

void in_bounds_runs_match_reference(const check_case& c) {
  const auto runs = simulate(c);
  bool any_oob = false, uncovered = false;
  for (const auto& r : runs) {
    any_oob = any_oob || !r.in_bounds;
    uncovered = uncovered || r.obs.rows_never_computed > 0;
    if (!r.in_bounds || !r.attention || r.obs.rows_never_computed > 0) continue;
    if (!r.obs.output_checked) RC_FAIL(where(c, r) + "output was not compared with the reference");
    if (r.obs.output_mismatch) RC_FAIL(where(c, r) + r.obs.mismatch_detail);
    if (r.obs.uninitialized_reads > 0)
      RC_FAIL(where(c, r) + std::to_string(r.obs.uninitialized_reads) + " uninitialized reads");
    if (r.obs.races > 0) RC_FAIL(where(c, r) + std::to_string(r.obs.races) + " shared-memory races");
  }
  RC_CLASSIFY(any_oob, "some run out of bounds");
  RC_CLASSIFY(uncovered, "prefill rows no tile covers");
  RC_TAG(to_string(c.be), to_string(c.model.kv_dtype));
}

void every_run_in_bounds_and_right(const check_case& c) {
  for (const auto& r : simulate(c)) {
    if (!r.in_bounds)
      RC_FAIL(where(c, r) + std::to_string(r.obs.oob_count) + " out-of-bounds accesses, first " +
              (r.obs.oob.empty() ? std::string("?") : r.obs.oob.front().buffer));
    if (r.obs.output_mismatch) RC_FAIL(where(c, r) + r.obs.mismatch_detail);
  }
}

const props::budget budget{300, 0, 100};

TEST(Reference, InBoundsRunsMatchUnderEveryPolicy) {
  const auto p = props::everything();
  props::check([p] { in_bounds_runs_match_reference(*generators::cases(p)); }, budget);
}

TEST(Reference, PerLayerRunsStayInBoundsAndRight) {
  const auto p = props::fixed();
  props::check([p] { every_run_in_bounds_and_right(*generators::cases(p)); }, budget);
}

TEST(Reference, FailsForModelWide) {
  const auto p = props::regressed();
  const auto r = props::run([p] { every_run_in_bounds_and_right(*generators::cases(p)); }, budget);
  ASSERT_TRUE(props::is_failure(r)) << "the regression was not caught within the budget";
  std::cout << "caught as expected:\n" << props::counterexample_case_json(r) << "\n";
}

}  // namespace
}  // namespace headroom
