// The benchmarks' check against the fp32 reference (kernels/reference) on sampled query rows: row
// (r, i) of request r, query index i, is the reference's one-token request of length pos + 1 over
// request r's block table (pos = seq_len - q_len + i, so the causal mask is the same), on every
// head. The plain-loop reference of a whole 8192-token prefill would take CPU hours; a row takes
// about a second at most.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/inputs.hpp"
#include "kernels/numeric.hpp"
#include "kernels/reference.hpp"

namespace headroom::bench {

// h: the case's host inputs (its caches are lent to the reference and given back); out: the
// kernel's whole output as floats; rows: (request, query index) pairs. Empty string: every sampled
// row within the bf16 tolerance.
inline std::string check_sampled_rows(attention_inputs<bf16>& h, const std::vector<float>& out,
                                      const std::vector<std::pair<int64_t, int64_t>>& rows) {
  attention_inputs<bf16> sub;
  sub.num_heads = h.num_heads, sub.num_kv_heads = h.num_kv_heads, sub.head_size = h.head_size;
  sub.block_size = h.block_size, sub.max_blocks_per_seq = h.max_blocks_per_seq, sub.max_query_len = 1;
  sub.query_start.push_back(0);
  std::vector<float> got;
  const int64_t row = h.num_heads * h.head_size, mbs = h.max_blocks_per_seq;
  for (auto [r, i] : rows) {
    const auto ri = static_cast<std::size_t>(r);
    const int64_t q0 = h.query_start[ri], q_len = h.query_start[ri + 1] - q0, t = q0 + i;
    sub.seq_lens.push_back(static_cast<int32_t>(h.seq_lens[ri] - q_len + i + 1));
    sub.query_start.push_back(sub.query_start.back() + 1);
    sub.block_table.insert(sub.block_table.end(), h.block_table.begin() + r * mbs,
                           h.block_table.begin() + (r + 1) * mbs);
    sub.q.insert(sub.q.end(), h.q.begin() + t * row, h.q.begin() + (t + 1) * row);
    got.insert(got.end(), out.begin() + t * row, out.begin() + (t + 1) * row);
  }
  std::swap(sub.k_cache, h.k_cache), std::swap(sub.v_cache, h.v_cache);
  const auto ref = attention_reference(sub);
  std::swap(sub.k_cache, h.k_cache), std::swap(sub.v_cache, h.v_cache);
  const auto cmp = compare_output(got, ref, dtype::bf16, h.num_heads, h.head_size);
  return cmp.mismatch ? cmp.detail : std::string{};
}

}  // namespace headroom::bench
