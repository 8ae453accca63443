// Guarded runs, failure naming and the shrink-while-failing loop of the fuzzer.
#include "generators/search.hpp"

#include <algorithm>
#include <set>

#include "generators/shrink.hpp"

namespace headroom::generators {

namespace {

// Lower rank: more telling. Unknown invariants come last.
int rank_of(const std::string& inv) {
  static const std::vector<std::string> order = {
      inv::group_agreement, inv::fallback_when_empty, inv::index_overflow,
      inv::buffer_capacity, inv::out_of_bounds,       inv::guard_corrupted,
      internal_error,       inv::output_mismatch,     inv::plan_run_heads,
      "uninitialized_read", "shared_race",        inv::tight_bound};
  auto it = std::find(order.begin(), order.end(), inv);
  return static_cast<int>(it - order.begin());
}

bool is_capacity(const std::string& inv) {
  return inv == inv::buffer_capacity || inv == inv::out_of_bounds;
}

}  // namespace

report run_guarded(const check_case& c, executor& ex) {
  try {
    return run_case(c, ex);
  } catch (const std::exception& e) {
    report r;
    r.ok = false;
    violation v;
    v.invariant = internal_error;
    v.be = c.be;
    v.tp = c.tp;
    v.detail = std::string("run_case threw: ") + e.what();
    v.repro = c;
    r.violations.push_back(std::move(v));
    return r;
  }
}

std::optional<failure_kind> primary_failure(const report& r) {
  const violation* best = nullptr;
  for (const auto& v : r.violations)
    if (!best || rank_of(v.invariant) < rank_of(best->invariant)) best = &v;
  if (!best) return std::nullopt;
  return failure_kind{best->invariant, best->buffer};
}

bool has_failure(const report& r, const failure_kind& k) {
  return std::any_of(r.violations.begin(), r.violations.end(), [&](const violation& v) {
    return v.invariant == k.invariant && v.buffer == k.buffer;
  });
}

std::string signature(const check_case& c, const report& r) {
  std::set<std::string> parts;
  for (const auto& v : r.violations)
    parts.insert(v.invariant + (v.buffer.empty() ? "" : "(" + v.buffer + ")"));
  std::string s = std::string(to_string(c.be)) + "/" + to_string(c.pol) + "/" + to_string(c.grp) + ":";
  bool first = true;
  for (const auto& p : parts) s += (first ? " " : " + ") + p, first = false;
  return s;
}

int overflowing_groups(const report& r) {
  std::set<int> groups;
  for (const auto& v : r.violations)
    if (is_capacity(v.invariant)) groups.insert(v.group);
  return static_cast<int>(groups.size());
}

finding shrink_failure(const check_case& c, const report& r, executor& ex, int max_evals) {
  finding f;
  f.original = c;
  f.kind = primary_failure(r).value_or(failure_kind{});
  auto still_fails = [&](const check_case& cand) { return has_failure(run_guarded(cand, ex), f.kind); };
  shrink_result s = shrink_greedy(c, still_fails, max_evals);
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
