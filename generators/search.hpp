// The fuzzer's engine, without RapidCheck's runner: run a case guarded against exceptions, name
// what failed (primary failure, signature for deduplication) and shrink a failing case greedily
// while it keeps failing the same way. `headroom fuzz` and the property tests both use it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/check/check.hpp"
#include "generators/pinned.hpp"

namespace headroom::generators {

// What went wrong, independent of the case's sizes.
struct failure_kind {
  invariant inv = invariant::internal_error;
  std::string buffer;
  bool operator==(const failure_kind&) const = default;
};

// run_case, with any exception turned into an internal_error violation (never propagates).
report run_guarded(const check_case& c, executor& ex);

// The most telling violation: agreement and fallback first, then capacity and out-of-bounds,
// then output and plan/run mismatches. Empty when the report is clean.
std::optional<failure_kind> primary_failure(const report& r);
bool has_failure(const report& r, const failure_kind& k);

// backend/policy/grouping: the sorted distinct invariant(buffer) of the report.
std::string signature(const check_case& c, const report& r);

// Number of distinct attention groups with a capacity failure (buffer_capacity, out_of_bounds).
int overflowing_groups(const report& r);

struct counterexample {
  check_case original;
  check_case shrunk;
  report shrunk_report;
  failure_kind kind;
  std::string signature;
  int shrink_steps = 0;
  int shrink_evals = 0;
};

// Shrinks a failing case while its primary failure persists (same invariant and buffer), then
// renumbers its layers when the failure survives that too. Every candidate keeps `pins`.
inline constexpr int default_shrink_evals = 1500;
counterexample shrink_failure(const check_case& c, const report& r, executor& ex,
                              int max_evals = default_shrink_evals, const pinned_settings& pins = {});

}  // namespace headroom::generators
