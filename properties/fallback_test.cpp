// Property: fallback when empty (docs/engines.md §1 step 2; TensorRT-LLM #17643). A builder falls back to
// the model-wide count exactly when none of its layer names is registered, and the checker then
// reports fallback_when_empty iff the group's layers run with more heads than that. When some
// names are registered, the builder's heads come from them (the one count, or the largest under
// `max`), never from the model-wide value. Unregistered names stand for draft-model layers.
#include <algorithm>
#include <set>

#include "core/check/group_check.hpp"
#include "properties/support/engine_view.hpp"
#include "properties/support/prop_check.hpp"
#include "properties/support/profiles.hpp"

namespace headroom {
namespace {

bool reports_fallback(const check_case& c, const engine& e, const attention_group& g) {
  model_executor model;
  group_context ctx{&e, &g, c, &model, std::nullopt, false, nullptr, nullptr};
  const group_result res = check_group(ctx, decode_sweep::of({decode_batch(1, 16)}), {});
  return std::any_of(res.violations.begin(), res.violations.end(),
                     [](const violation& v) { return v.inv == invariant::fallback_when_empty; });
}

// check_checker: also require the checker's verdict (fallback_when_empty iff the fallback is
// smaller than the group's layers). See Fallback.CheckerReportsAnUnsafeFallback.
void fallback_only_when_empty(const check_case& c, bool check_checker) {
  const engine e = make_engine(c);
  attention_group g = e.groups[*rc::gen::inRange<std::size_t>(0, e.groups.size())];
  // The builder's names: a random subset of the group's layers plus unregistered draft names.
  const auto keep = *rc::gen::container<std::vector<bool>>(g.layers.size(), rc::gen::arbitrary<bool>());
  const int drafts = *rc::gen::inRange(0, 3);
  std::vector<std::string> names;
  std::set<int64_t> found;
  int64_t group_max = 0;
  for (std::size_t i = 0; i < g.layers.size(); ++i) {
    const int64_t h = e.reg.find(g.layers[i])->num_heads;
    group_max = std::max(group_max, h);
    if (keep[i]) names.push_back(g.layers[i]), found.insert(h);
  }
  for (int d = 0; d < drafts; ++d) names.push_back("draft.model.layers." + std::to_string(d) + ".attn");
  g.builder_layers = names;
  const int64_t mw = e.rg.model_wide_heads;
  const head_resolution hr = resolve_heads(e.reg, names, c.pol, mw);
  RC_CLASSIFY(found.empty(), "no registered name");
  RC_CLASSIFY(found.empty() && group_max > mw, "empty and smaller than the layers");
  if (found.empty()) {
    RC_ASSERT(hr.fell_back);
    RC_ASSERT(hr.builder_heads == mw);
    if (check_checker) RC_ASSERT(reports_fallback(c, e, g) == (group_max > mw));
    return;
  }
  RC_ASSERT(!hr.fell_back);
  if (check_checker) RC_ASSERT(!reports_fallback(c, e, g));
  if (hr.disagreement) return;  // per-layer with several counts: the assertion (group agreement)
  const int64_t expected = c.pol == policy::max ? *found.rbegin() : *found.begin();
  if (hr.builder_heads != expected)
    RC_FAIL("builder resolved " + std::to_string(hr.builder_heads) +
            " heads from registered layers "
            "with " +
            std::to_string(expected) + " (model-wide " + std::to_string(mw) + ")");
}

const props::budget budget{1000, 0, 100};

TEST(Fallback, ResolvesOnlyWhenEmptyForPerLayerAndMax) {
  const auto p = props::profile_of({policy::per_layer, policy::max}, {grouping::heads, grouping::legacy});
  props::check([p] { fallback_only_when_empty(*generators::cases(p), false); }, budget);
}

// The checker's own verdict agrees (this found check_group dropping the violation it recorded).
TEST(Fallback, CheckerReportsAnUnsafeFallback) {
  const auto p = props::profile_of({policy::per_layer, policy::max}, {grouping::heads, grouping::legacy});
  props::check([p] { fallback_only_when_empty(*generators::cases(p), true); }, budget);
}

TEST(Fallback, FailsForModelWide) {
  const auto p = props::regressed();
  const auto r = props::run([p] { fallback_only_when_empty(*generators::cases(p), false); }, budget);
  ASSERT_TRUE(props::is_failure(r)) << "model-wide resolution was not caught within the budget";
  std::cout << "caught as expected:\n" << props::counterexample_case_json(r) << "\n";
}

}  // namespace
}  // namespace headroom
