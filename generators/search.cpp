// Guarded runs, failure naming and the shrink-while-failing loop of the fuzzer.
#include "generators/search.hpp"

#include <algorithm>
#include <set>

#include "generators/shrink.hpp"

namespace headroom::generators {

namespace {

// Lower rank: more telling. Unknown invariants come last.
int rank_of(invariant i) {
  static const std::vector<invariant> order = {
      invariant::group_agreement,    invariant::fallback_when_empty, invariant::index_overflow,
      invariant::buffer_capacity,    invariant::out_of_bounds,       invariant::guard_corrupted,
      invariant::internal_error,     invariant::output_mismatch,     invariant::plan_run_heads,
      invariant::uninitialized_read, invariant::shared_race,         invariant::tight_bound};
  auto it = std::find(order.begin(), order.end(), i);
  return static_cast<int>(it - order.begin());
}

bool is_capacity(invariant i) { return i == invariant::buffer_capacity || i == invariant::out_of_bounds; }

}  // namespace

report run_guarded(const check_case& c, executor& ex) {
  try {
    return run_case(c, ex);
  } catch (const std::exception& e) {
    report r;
    r.ok = false;
    violation v;
    v.inv = invariant::internal_error;
    v.be = c.be;
    v.tp = c.tp;
    v.detail = std::string("run_case threw: ") + e.what();
    set_case(v, c);
    r.violations.push_back(std::move(v));
    return r;
  }
}

std::optional<failure_kind> primary_failure(const report& r) {
  const violation* best = nullptr;
  for (const auto& v : r.violations)
    if (!best || rank_of(v.inv) < rank_of(best->inv)) best = &v;
  if (!best) return std::nullopt;
  return failure_kind{best->inv, best->buffer};
}

bool has_failure(const report& r, const failure_kind& k) {
  return std::any_of(r.violations.begin(), r.violations.end(),
                     [&](const violation& v) { return v.inv == k.inv && v.buffer == k.buffer; });
}

std::string signature(const check_case& c, const report& r) {
  std::set<std::string> parts;
  for (const auto& v : r.violations)
    parts.insert(to_string(v.inv) + (v.buffer.empty() ? "" : "(" + v.buffer + ")"));
  std::string s = std::string(to_string(c.be)) + "/" + to_string(c.pol) + "/" + to_string(c.grp) + ":";
  bool first = true;
  for (const auto& p : parts) s += (first ? " " : " + ") + p, first = false;
  return s;
}

int overflowing_groups(const report& r) {
  std::set<int> groups;
  for (const auto& v : r.violations)
    if (is_capacity(v.inv)) groups.insert(v.group);
  return static_cast<int>(groups.size());
}

counterexample shrink_failure(const check_case& c, const report& r, executor& ex, int max_evals,
                              const pinned_settings& pins) {
  counterexample f;
  f.original = c;
  f.kind = primary_failure(r).value_or(failure_kind{});
  auto still_fails = [&](const check_case& cand) { return has_failure(run_guarded(cand, ex), f.kind); };
  auto keeps_pins = [&](const check_case& cand) { return holds(pins, cand); };
  shrink_result s = shrink_greedy(c, still_fails, max_evals, keeps_pins);
  f.shrunk = s.c;
  f.shrink_steps = s.steps;
  f.shrink_evals = s.evals;
  const check_case tidy = renumbered(f.shrunk);
  if (!(tidy == f.shrunk) && still_fails(tidy)) f.shrunk = tidy;
  f.shrunk_report = run_guarded(f.shrunk, ex);
  f.signature = signature(f.shrunk, f.shrunk_report);
  return f;
}

}  // namespace headroom::generators
