// The readable report: a threshold table per (backend, tp, group), the class thresholds (a class
// whose variable is not a decode batch), then the violations, then notes. Text that came from the
// input (its path, layer names in details and notes) is shown through one_line, so that no input
// can add a line (a second "verdict:") to the report.
#include <cstdio>

#include "cli/commands.hpp"
#include "core/util/one_line.hpp"

namespace headroom::cli {
namespace {

std::string shown(const std::string& s) { return one_line(s, 4096); }

void print_thresholds(const report& r) {
  bool any_class = false;
  std::printf("%-10s %4s %5s %13s %11s %24s\n", "backend", "tp", "group", "builder_heads", "layer_heads",
              "min_failing_decode_batch");
  for (const auto& t : r.thresholds) {
    if (!t.variable.empty()) {
      any_class = true;
      continue;
    }
    const std::string mf = t.min_failing_decode_batch ? std::to_string(*t.min_failing_decode_batch) : "-";
    std::printf("%-10s %4lld %5d %13lld %11lld %24s\n", to_string(t.be), (long long)t.tp, t.group,
                (long long)t.builder_heads, (long long)t.layer_heads, mf.c_str());
  }
  std::printf("\n");
  if (!any_class) return;
  std::printf("%-10s %4s %5s %5s %19s %11s\n", "backend", "tp", "group", "class", "variable", "min_failing");
  for (const auto& t : r.thresholds)
    if (!t.variable.empty())
      std::printf("%-10s %4lld %5d %5s %19s %11lld\n", to_string(t.be), (long long)t.tp, t.group,
                  to_string(t.cls), t.variable.c_str(), (long long)t.min_failing);
  std::printf("\n");
}

}  // namespace

void print_report(const report& r, const std::string& title) {
  std::printf("%s\n\n", shown(title).c_str());
  if (!r.thresholds.empty()) print_thresholds(r);
  for (const auto& v : r.violations) {
    std::printf("VIOLATION %s", to_string(v.inv));
    if (v.cls != bug_class::none) std::printf(" [%s]", to_string(v.cls));
    std::printf(": %s tp %lld group %d (%zu layers)", to_string(v.be), (long long)v.tp, v.group,
                v.layers.size());
    if (!v.buffer.empty() && (v.capacity_bytes > 0 || v.required_bytes > 0))
      std::printf(" %s: capacity %lld B, required %lld B", v.buffer.c_str(), (long long)v.capacity_bytes,
                  (long long)v.required_bytes);
    std::printf("\n    %s\n", shown(v.detail).c_str());
  }
  for (const auto& n : r.notes) std::printf("note: %s\n", shown(n).c_str());
  std::printf("\nverdict: %s", r.ok ? "OK (every invariant holds)" : "FAIL");
  if (!r.ok) std::printf(" (%zu violations)", r.violations.size());
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace headroom::cli
