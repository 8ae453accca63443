// Property: the formulas and the simulator agree on every verdict. Per run: the same touched
// extent of every plan buffer, an out-of-bounds access iff the model says overflow, in the same
// buffer, and nothing outside the plan's buffers. Per case: model buffer_capacity <=> sim
// out_of_bounds for the same (group, buffer); group_agreement, fallback, plan_run_heads and
// index_overflow identical. Every policy and grouping (agreement must hold for overflowing plans
// too). FlashInfer prefill plans too: the same rows never computed (in-bounds runs) and reads of
// never-written work entries.
#include <set>
#include <tuple>

#include "core/check/check.hpp"
#include "properties/support/edited.hpp"
#include "properties/support/engine_view.hpp"
#include "properties/support/paired.hpp"
#include "properties/support/prop_check.hpp"
#include "properties/support/profiles.hpp"

namespace headroom {
namespace {

using props::verdict;

// The verdicts the formulas can predict, with the sim's out_of_bounds named as the model's.
std::set<verdict> predictable(const report& r) {
  std::set<verdict> out;
  for (const auto& v : r.violations) {
    const invariant i = v.inv == invariant::out_of_bounds ? invariant::buffer_capacity : v.inv;
    if (i == invariant::buffer_capacity || i == invariant::group_agreement ||
        i == invariant::plan_run_heads || i == invariant::fallback_when_empty ||
        i == invariant::index_overflow)
      out.insert({v.group, to_string(i), v.buffer});
  }
  return out;
}

// Runs the case on `model` and on the simulator (paired with `model_for_pairing`).
void model_and_sim_agree(const check_case& c, executor& model, executor& model_for_pairing) {
  auto sim = props::make_sim();
  props::paired_executor paired(model_for_pairing, *sim);
  const report rm = run_case(c, model);
  const report rs = run_case(c, paired);
  bool overflow = false;
  for (const auto& rec : paired.records()) overflow = overflow || !rec.in_bounds;
  RC_CLASSIFY(overflow, "sim saw an overflow");
  RC_CLASSIFY(props::heterogeneous(c), "heterogeneous heads");
  RC_TAG(to_string(c.be), to_string(c.pol));
  if (!paired.disagreements().empty()) RC_FAIL("per run: " + paired.disagreements().front());
  const auto pm = predictable(rm), ps = predictable(rs);
  if (pm != ps) RC_FAIL("verdicts differ: model" + props::describe(pm) + " vs sim" + props::describe(ps));
}

const props::budget budget{400, 0, 100};

TEST(ModelSim, AgreeOnEveryVerdict) {
  const auto p = props::everything();
  props::check(
      [p] {
        model_executor a, b;
        model_and_sim_agree(*generators::cases(p), a, b);
      },
      budget);
}

TEST(ModelSim, DetectsAPlantedModelBug) {
  const auto p = props::everything();
  const auto r = props::run(
      [p] {
        // a model whose formulas are one element short
        model_executor fa, fb;
        props::edited_executor a(fa, props::one_element_short), b(fb, props::one_element_short);
        model_and_sim_agree(*generators::cases(p), a, b);
      },
      budget);
  ASSERT_TRUE(props::is_failure(r)) << "an off-by-one model went unnoticed";
}

}  // namespace
}  // namespace headroom
