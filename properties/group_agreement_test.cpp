// Property: group agreement (docs/engines.md §1, 3). Every layer of an attention group runs with the head
// count its builder was sized for, or the checker reports group_agreement for that group (the
// engine's assertion). Holds for the fix under the heads and legacy groupings; fails for the
// regression (model-wide) and for the spec-decode proposer path (builder from the first layer).
// Under the heads grouping the key itself must keep head counts apart: there a reported
// group_agreement is a failure too (the legacy grouping, whose key has no heads, must fail it).
#include <set>

#include "core/check/check.hpp"
#include "properties/support/engine_view.hpp"
#include "properties/support/prop_check.hpp"
#include "properties/support/profiles.hpp"

namespace headroom {
namespace {

// `key_has_heads`: the grouping's key includes the query heads, so no group may mix them and no
// group_agreement may be reported.
void group_agreement_holds(const check_case& c, bool key_has_heads = false) {
  const engine e = make_engine(c);
  model_executor model;
  const report r = run_case(c, model);
  std::set<int> flagged;
  for (const auto& v : r.violations)
    if (v.inv == invariant::group_agreement) flagged.insert(v.group);
  bool mixed = false;
  for (const auto& g : e.groups) {
    const head_resolution hr = props::resolution_of(c, e, g);
    std::set<int64_t> heads;
    std::set<int64_t> windows;
    for (const auto& n : g.layers)
      heads.insert(e.reg.find(n)->num_heads), windows.insert(e.reg.find(n)->sliding_window);
    mixed = mixed || heads.size() > 1;
    // FlashInfer's builder also asserts its layers share one window (docs/design.md).
    const bool window_mixed = c.be == backend::flashinfer && windows.size() > 1;
    if (key_has_heads && (heads.size() > 1 || (flagged.count(g.index) && !window_mixed)))
      RC_FAIL("group " + std::to_string(g.index) + " mixes " + std::to_string(heads.size()) +
              " head counts under a grouping keyed by heads");
    if (hr.disagreement || window_mixed) {
      RC_ASSERT(flagged.count(g.index) == 1u);
      continue;
    }
    RC_ASSERT(flagged.count(g.index) == 0u);
    for (int64_t h : heads)
      if (h != hr.builder_heads)
        RC_FAIL("group " + std::to_string(g.index) + ": builder sized for " +
                std::to_string(hr.builder_heads) + " heads, a layer runs with " + std::to_string(h) +
                ", and no group_agreement was reported");
  }
  RC_CLASSIFY(props::heterogeneous(c), "heterogeneous heads");
  RC_CLASSIFY(mixed, "mixed heads inside one attention group");
  RC_TAG(to_string(c.grp));
}

const props::budget budget{1000, 0, 100};

TEST(GroupAgreement, HoldsForPerLayerUnderHeadsAndLegacyGrouping) {
  const auto p = props::profile_of({policy::per_layer}, {grouping::heads, grouping::legacy});
  props::check([p] { group_agreement_holds(*generators::cases(p)); }, budget);
}

TEST(GroupAgreement, HeadsGroupingNeverMixesHeadCounts) {
  const auto p = props::profile_of({policy::per_layer}, {grouping::heads});
  props::check([p] { group_agreement_holds(*generators::cases(p), true); }, budget);
}

TEST(GroupAgreement, LegacyKeyFailsTheHeadsGroupingRule) {
  const auto p = props::profile_of({policy::per_layer}, {grouping::legacy});
  const auto r = props::run([p] { group_agreement_holds(*generators::cases(p), true); }, budget);
  ASSERT_TRUE(props::is_failure(r)) << "a key without heads was not caught within the budget";
}

TEST(GroupAgreement, FailsForModelWide) {
  const auto p = props::regressed();
  const auto r = props::run([p] { group_agreement_holds(*generators::cases(p)); }, budget);
  ASSERT_TRUE(props::is_failure(r)) << "the regression was not caught within the budget";
  std::cout << "caught as expected:\n" << props::counterexample_case_json(r) << "\n";
}

TEST(GroupAgreement, FailsForTheProposerPath) {
  const auto p = props::profile_of({policy::per_layer}, {grouping::proposer});
  const auto r = props::run([p] { group_agreement_holds(*generators::cases(p)); }, budget);
  ASSERT_TRUE(props::is_failure(r)) << "the proposer path's first-layer builder was not caught";
  std::cout << "caught as expected:\n" << props::counterexample_case_json(r) << "\n";
}

}  // namespace
}  // namespace headroom
