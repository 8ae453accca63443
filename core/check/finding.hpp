// What a check can find, and one finding: the invariant it breaks, the buffer it is about, the
// capacity and the need in bytes, and one readable sentence. Every target reports findings; the
// checker adds where (backend, tp, group) and a replayable case to make a violation (check.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace headroom {

enum class invariant {
  group_agreement,      // one builder serves layers that disagree: head counts (FlashInfer: windows too)
  fallback_when_empty,  // no layer found: the model-wide fallback is smaller than the layers
  buffer_capacity,      // the formulas: a run needs more of a plan buffer than it holds
  plan_run_heads,       // planned with one head count, run with another
  tight_bound,          // a buffer more than K times the largest need (opt-in)
  index_overflow,       // an element index past a kernel's 32-bit offsets
  out_of_bounds,        // an observed access past a buffer (sim, gpu), or a GPU fault
  output_mismatch,      // the kernels' output differs from the fp32 reference
  guard_corrupted,      // canary bytes around a GPU buffer changed
  uninitialized_read,   // a read of memory no store wrote
  shared_race,          // shared memory accessed across a missing barrier
  internal_error,       // a valid case made the checker throw: a bug of headroom itself
  path_choice,          // a kernel path chosen from another geometry than the group's own
  plan_run_shape,       // a run's sizes (rows, splits) differ from what its metadata was planned for
  block_unit,           // an index into a group's block table computed in another group's block unit
};

// The catalogue's bug classes (docs/catalogue.md; the mutants of core/check/mutants.hpp).
enum class bug_class : uint8_t { none, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11 };
const char* to_string(bug_class c);    // "C1".."C11", "" for none
const char* class_title(bug_class c);  // one line: what the class is

// The invariant's name in reports and messages.
const char* to_string(invariant i);
std::optional<invariant> parse_invariant(std::string_view name);

// A finding that makes its decode batch fail (and so counts toward min_failing_decode_batch): an
// access past a buffer, by the formulas or observed. Wrong heads, wrong output and hazards are
// reported without moving the threshold.
bool is_capacity_failure(invariant i);

struct finding {
  invariant inv = invariant::buffer_capacity;
  std::string buffer;               // empty when not about one buffer
  int64_t capacity_bytes = 0;       // what the plan holds
  int64_t required_bytes = 0;       // what the run needs or touched
  std::string detail;               // one readable sentence
  bug_class cls = bug_class::none;  // the catalogue class it belongs to, when known
  bool operator==(const finding&) const = default;
};

}  // namespace headroom
