// Token offsets (offsets.hpp).
#include "core/backends/offsets.hpp"

#include "core/util/checked.hpp"

namespace headroom {

offset_probe_plan plan_offset_probe(int64_t q_rows, bool int32_offsets) {
  offset_probe_plan p;
  p.q_rows = q_rows;
  p.int32_offsets = int32_offsets;
  p.buffers = {{"probe_offset", 8, 8}};
  return p;
}

int64_t largest_token_offset(const offset_probe_plan& p, const rank_layer& l) {
  if (p.q_rows < 1) return 0;
  return checked_product("token offset", p.q_rows, l.num_heads, l.head_size) - 1;
}

bool token_offset_wraps(const offset_probe_plan& p, const rank_layer& l) {
  return p.int32_offsets && largest_token_offset(p, l) > max_kernel_index;
}

}  // namespace headroom
