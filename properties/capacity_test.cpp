// Property: with the per-layer policy every plan-time buffer holds what every run of every layer
// of its group needs, on every backend (docs/engines.md §5-6), for the generated batch and for the worst
// decode batches (Triton at its threshold with all 16 segments, FlashInfer split into chunks).
// Computed from the formulas independently of the checker, then the checker must agree.
#include <algorithm>

#include "core/check/check.hpp"
#include "generators/case_gen.hpp"
#include "properties/support/engine_view.hpp"
#include "properties/support/prop_check.hpp"
#include "properties/support/profiles.hpp"

namespace headroom {
namespace {

std::vector<batch> batches_for(const check_case& c) {
  return {c.b, decode_batch(generators::triton_thr_of(c), 257), decode_batch(1, 257), decode_batch(8, 300)};
}

// Returns the first run whose need exceeds its buffer, as a sentence; empty when all fit.
std::string first_overflow(const check_case& c) {
  const engine e = make_engine(c);
  for (const auto& g : e.groups) {
    const head_resolution hr = props::resolution_of(c, e, g);
    if (hr.disagreement) continue;  // the engine asserts: no builder, no buffers
    for (const batch& b : batches_for(c))
      for (const auto& p : props::plans_for(c, e, g, hr.builder_heads, b))
        for (const rank_layer* l : props::layers_of(e, g))
          for (const auto& need : props::needs_of(p, *l, c.model.kv_dtype)) {
            const buffer_plan* cap = find_buffer(plan_buffers(p.plan), need.name);
            if (cap && need.elems > cap->capacity_elems())
              return std::string(to_string(c.be)) + " " + need.name + ": " + std::to_string(need.bytes()) +
                     " bytes needed by a " + std::to_string(l->num_heads) + "-head layer, " +
                     std::to_string(cap->capacity_bytes) + " planned for " +
                     std::to_string(hr.builder_heads) + " heads, " + std::to_string(b.num_seqs()) +
                     " requests";
          }
  }
  return "";
}

void buffers_suffice(check_case c) {
  RC_CLASSIFY(props::heterogeneous(c), "heterogeneous heads");
  for (backend be : {backend::triton, backend::flashinfer}) {
    c.be = be;
    const std::string over = first_overflow(c);
    if (!over.empty()) RC_FAIL(over);
    model_executor model;
    const report r = run_case(c, model);
    for (const auto& v : r.violations)
      if (v.inv == invariant::buffer_capacity || v.inv == invariant::index_overflow)
        RC_FAIL(std::string("the checker reports ") + to_string(v.inv) + ": " + v.detail);
  }
}

const props::budget budget{1000, 0, 100};

TEST(Capacity, PerLayerFitsEveryRunOnEveryBackend) {
  const auto p = props::fixed();
  props::check([p] { buffers_suffice(*generators::cases(p)); }, budget);
}

TEST(Capacity, MaxFitsUnderHeadsAndLegacyGrouping) {
  const auto p = props::profile_of({policy::max}, {grouping::heads, grouping::legacy});
  props::check([p] { buffers_suffice(*generators::cases(p)); }, budget);
}

TEST(Capacity, FailsForModelWide) {
  const auto p = props::regressed();
  const auto r = props::run([p] { buffers_suffice(*generators::cases(p)); }, budget);
  ASSERT_TRUE(props::is_failure(r)) << "the regression was not caught within the budget";
  std::cout << "caught as expected:\n" << props::counterexample_case_json(r) << "\n";
}

TEST(Capacity, FailsForTheProposerPath) {
  const auto p = props::profile_of({policy::per_layer}, {grouping::proposer});
  const auto r = props::run([p] { buffers_suffice(*generators::cases(p)); }, budget);
  ASSERT_TRUE(props::is_failure(r)) << "the proposer path was not caught within the budget";
  std::cout << "caught as expected:\n" << props::counterexample_case_json(r) << "\n";
}

}  // namespace
}  // namespace headroom
