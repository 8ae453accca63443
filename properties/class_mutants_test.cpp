// The formula-level classes C9 and C11 (docs/catalogue.md): the fixed mirror never reports them
// on generated cases, and with each of their mutants switched on the fuzzer's search finds a
// finding of the class within 200 cases from the run's seed and shrinks it to at most two layers.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/check/check.hpp"
#include "generators/case_gen.hpp"
#include "generators/search.hpp"
#include "properties/support/prop_check.hpp"
#include "properties/support/profiles.hpp"

namespace headroom {
namespace {

bool has_class(const report& r, bug_class cls) {
  return std::any_of(r.violations.begin(), r.violations.end(),
                     [cls](const violation& v) { return v.cls == cls; });
}

TEST(ClassMutants, TheFixReportsNoC9OrC11) {
  props::check(
      [] {
        const check_case c = *generators::cases(props::fixed());
        model_executor model;
        const report r = run_case(c, model);
        RC_ASSERT(!has_class(r, bug_class::c9));
        RC_ASSERT(!has_class(r, bug_class::c11));
      },
      {200, 0, 100});
}

void found_within(const std::string& mutant, bug_class cls, int budget) {
  const uint64_t seed = props::current().seed;
  generators::case_profile p = props::fixed();
  p.mutants = {mutant};
  model_executor model;
  for (int i = 0; i < budget; ++i) {
    const check_case c = generators::sample_case(p, seed, static_cast<uint64_t>(i));
    const report r = generators::run_guarded(c, model);
    if (!has_class(r, cls)) continue;
    const generators::counterexample f = generators::shrink_failure(c, r, model);
    std::cout << mutant << ": case " << i << " (" << f.signature << "), shrunk to "
              << to_json(f.shrunk).dump() << "\n";
    EXPECT_TRUE(has_class(f.shrunk_report, cls)) << to_json(f.shrunk_report).dump();
    EXPECT_LE(f.shrunk.model.layers.size(), 2u);
    return;
  }
  FAIL() << mutant << ": no " << to_string(cls) << " finding in " << budget << " cases (seed " << seed << ")";
}

TEST(ClassMutants, HeadPadDivisorsOnlyIsFound) { found_within("head-pad-divisors-only", bug_class::c9, 200); }
TEST(ClassMutants, HeadDimFromHiddenIsFound) { found_within("head-dim-from-hidden", bug_class::c9, 200); }
TEST(ClassMutants, MambaIndexMinBlockSizeIsFound) {
  found_within("mamba-index-min-block-size", bug_class::c11, 200);
}

}  // namespace
}  // namespace headroom
