// The fp32 oracle: plain-loop attention over the paged KV cache (block tables, GQA, causal for the
// new tokens, sliding window), clear over fast; and the comparison of a kernel's output with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/geometry.hpp"
#include "kernels/inputs.hpp"
#include "kernels/tolerance.hpp"

namespace headroom {

// out[t][h][d] for every query token t (row-major [tokens][heads][head_size]).
template <class T>
std::vector<float> attention_reference(const attention_inputs<T>& in);

// The output elements the metadata's requests cover: rows before query_start[num_seqs()]. The
// rest of q are padded tokens (a graph's padding, a dummy's tokens past its requests) whose output
// the engine discards; the bodies leave them unwritten and the reference at 0.
template <class T>
int64_t covered_output(const attention_inputs<T>& in) {
  const int64_t rows = in.query_start.empty() ? 0 : in.query_start[static_cast<std::size_t>(in.num_seqs())];
  return rows * in.num_heads * in.head_size;
}

struct output_comparison {
  bool mismatch = false;
  int64_t bad = 0;         // elements outside tolerance (NaN counts)
  double max_abs_err = 0;  // over finite elements
  std::string detail;      // the first few mismatches with [t][h][d] indices
};

// `out` holds the kernel's output converted to float.
output_comparison compare_output(const std::vector<float>& out, const std::vector<float>& ref, dtype d,
                                 int64_t heads, int64_t head_size, int max_listed = 5);
// The same against another bound (`label` names it in the detail).
output_comparison compare_output(const std::vector<float>& out, const std::vector<float>& ref, tolerance tol,
                                 const std::string& label, int64_t heads, int64_t head_size,
                                 int max_listed = 5);

}  // namespace headroom
