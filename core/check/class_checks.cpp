// The registry of class checks (one per catalogue class that has more than the decode sweep).
#include "core/check/class_checks.hpp"

#include <array>

#include "core/check/classes/classes.hpp"

namespace headroom {

std::span<const class_check> class_checks() {
  static constexpr std::array<class_check, 10> all = {
      check_c2_path_choice,   check_c3_fa3_metadata, check_c4_block_table,  check_c5_request_meta,
      check_c6_int32_offsets, check_c7_empty_work,   check_c8_draft_passes, check_c9_head_pad,
      check_c10_graph_grid,   check_c11_mamba_index};
  return all;
}

}  // namespace headroom
