// Invariant names (one table) and the threshold rule.
#include "core/check/finding.hpp"

#include "core/util/names.hpp"

namespace headroom {
namespace {

constexpr name_table<invariant, 15> names = {{
    {invariant::group_agreement, "group_agreement"},
    {invariant::fallback_when_empty, "fallback_when_empty"},
    {invariant::buffer_capacity, "buffer_capacity"},
    {invariant::plan_run_heads, "plan_run_heads"},
    {invariant::tight_bound, "tight_bound"},
    {invariant::index_overflow, "index_overflow"},
    {invariant::out_of_bounds, "out_of_bounds"},
    {invariant::output_mismatch, "output_mismatch"},
    {invariant::guard_corrupted, "guard_corrupted"},
    {invariant::uninitialized_read, "uninitialized_read"},
    {invariant::shared_race, "shared_race"},
    {invariant::internal_error, "internal_error"},
    {invariant::path_choice, "path_choice"},
    {invariant::plan_run_shape, "plan_run_shape"},
    {invariant::block_unit, "block_unit"},
}};

}  // namespace

const char* to_string(invariant i) { return name_in(names, i, "unknown"); }

std::optional<invariant> parse_invariant(std::string_view name) { return find_in(names, name); }

bool is_capacity_failure(invariant i) {
  switch (i) {
    case invariant::buffer_capacity:
    case invariant::index_overflow:
    case invariant::out_of_bounds:
    case invariant::guard_corrupted:
      return true;
    default:
      return false;
  }
}

}  // namespace headroom
