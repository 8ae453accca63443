// Token offsets (offsets.hpp).
#include "core/backends/offsets.hpp"

#include <algorithm>

#include "core/util/checked.hpp"

namespace headroom {

offset_probe_plan plan_offset_probe(int64_t q_rows, bool int32_offsets, bool fused_qkv) {
  offset_probe_plan p;
  p.q_rows = q_rows;
  p.int32_offsets = int32_offsets;
  p.fused_qkv = fused_qkv;
  p.buffers = {{"probe_offset", 8, 8}};
  return p;
}

int64_t q_row_stride(const offset_probe_plan& p, const rank_layer& l) {
  const int64_t q = checked_mul(l.num_heads, l.head_size, "q row");
  if (!p.fused_qkv) return q;
  const int64_t kv = checked_add(checked_mul(l.num_kv_heads, l.head_size, "k row"),
                                 checked_mul(l.num_kv_heads, head_size_v_of(l), "v row"), "kv row");
  return checked_add(q, kv, "qkv row");
}

int64_t largest_q_offset(const offset_probe_plan& p, const rank_layer& l) {
  if (p.q_rows < 1) return 0;
  const int64_t rows = checked_mul(p.q_rows - 1, q_row_stride(p, l), "q offset");
  return checked_add(rows, checked_mul(l.num_heads, l.head_size, "q row"), "q offset") - 1;
}

int64_t largest_output_offset(const offset_probe_plan& p, const rank_layer& l) {
  if (p.q_rows < 1) return 0;
  return checked_product("output offset", p.q_rows, l.num_heads, head_size_v_of(l)) - 1;
}

int64_t largest_token_offset(const offset_probe_plan& p, const rank_layer& l) {
  return std::max(largest_q_offset(p, l), largest_output_offset(p, l));
}

bool token_offset_wraps(const offset_probe_plan& p, const rank_layer& l) {
  return p.int32_offsets && largest_token_offset(p, l) > max_kernel_index;
}

}  // namespace headroom
