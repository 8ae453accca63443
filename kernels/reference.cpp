// Plain-loop fp32 reference attention and the output comparison (reference.hpp).
#include "kernels/reference.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "kernels/numeric.hpp"
#include "kernels/reference_row.hpp"
#include "kernels/tolerance.hpp"

namespace headroom {

template <class T>
std::vector<float> attention_reference(const attention_inputs<T>& in) {
  const int64_t H = in.num_heads, D = in.head_size;
  // Either layout (inputs.hpp): K row r at r * stride of k, V row r at r * stride of v.
  const bool packed = in.layout == kv_layout::packed;
  const T* k = packed ? in.kv_cache.data() : in.k_cache.data();
  const reference_view<T> view{in.q.data(),
                               k,
                               packed ? k + D : in.v_cache.data(),
                               in.block_table.data(),
                               in.seq_lens.data(),
                               in.query_start.data(),
                               H,
                               in.num_kv_heads,
                               D,
                               in.block_size,
                               in.sliding_window,
                               in.max_blocks_per_seq,
                               in.kv_row_stride()};
  std::vector<float> out(static_cast<std::size_t>(in.num_tokens() * H * D), 0.0f), scores;
  for (int64_t s = 0; s < in.num_seqs(); ++s) {
    scores.resize(static_cast<std::size_t>(std::max(in.seq_lens[s], 1)));
    for (int64_t i = 0; i < in.query_start[s + 1] - in.query_start[s]; ++i)
      for (int64_t h = 0; h < H; ++h)
        reference_row(view, s, i, h, &out[static_cast<std::size_t>(((in.query_start[s] + i) * H + h) * D)],
                      scores.data());
  }
  return out;
}

template std::vector<float> attention_reference<float>(const attention_inputs<float>&);
template std::vector<float> attention_reference<bf16>(const attention_inputs<bf16>&);
template std::vector<float> attention_reference<fp16>(const attention_inputs<fp16>&);

output_comparison compare_output(const std::vector<float>& out, const std::vector<float>& ref, dtype d,
                                 int64_t heads, int64_t head_size, int max_listed) {
  return compare_output(out, ref, tolerance_for(d), to_string(d), heads, head_size, max_listed);
}

output_comparison compare_output(const std::vector<float>& out, const std::vector<float>& ref, tolerance tol,
                                 const std::string& label, int64_t heads, int64_t head_size, int max_listed) {
  output_comparison c;
  std::ostringstream os;
  if (out.size() != ref.size()) {
    c.mismatch = true;
    c.detail =
        "output has " + std::to_string(out.size()) + " elements, reference " + std::to_string(ref.size());
    return c;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double err = std::fabs(static_cast<double>(out[i]) - ref[i]);
    const bool ok = within_tolerance(out[i], ref[i], tol.atol, tol.rtol);
    if (std::isfinite(out[i])) c.max_abs_err = std::max(c.max_abs_err, err);
    if (ok) continue;
    if (c.bad++ < max_listed) {
      const int64_t e = static_cast<int64_t>(i), dd = e % head_size, h = e / head_size % heads;
      os << (c.bad > 1 ? "; " : "") << "out[" << e / head_size / heads << "][" << h << "][" << dd
         << "] = " << out[i] << ", reference " << ref[i];
    }
  }
  c.mismatch = c.bad > 0;
  if (c.mismatch)
    c.detail = std::to_string(c.bad) + " of " + std::to_string(out.size()) + " elements outside atol " +
               std::to_string(tol.atol) + " rtol " + std::to_string(tol.rtol) + " (" + label +
               "): " + os.str();
  return c;
}

}  // namespace headroom
