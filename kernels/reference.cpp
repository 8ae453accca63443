// Plain-loop fp32 reference attention and the output comparison (reference.hpp).
#include "kernels/reference.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "kernels/numeric.hpp"
#include "kernels/tolerance.hpp"

namespace headroom {

namespace {
template <class T>
std::vector<float> widen(const std::vector<T>& v) {
  std::vector<float> f(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) f[i] = to_float(v[i]);
  return f;
}
}  // namespace

template <class T>
std::vector<float> attention_reference(const attention_inputs<T>& in) {
  const int64_t H = in.num_heads, KV = in.num_kv_heads, D = in.head_size, G = H / KV;
  const int64_t bs = in.block_size, W = in.sliding_window;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // Either layout (inputs.hpp): K row r at r * stride of k, V row r at r * stride of v.
  const bool packed = in.layout == kv_layout::packed;
  const auto q = widen(in.q), kv = widen(packed ? in.kv_cache : in.k_cache),
             vs = packed ? std::vector<float>{} : widen(in.v_cache);
  const float* k = kv.data();
  const float* v = packed ? kv.data() + D : vs.data();
  const int64_t stride = in.kv_row_stride();
  std::vector<float> out(static_cast<std::size_t>(in.num_tokens() * H * D), 0.0f);
  std::vector<float> p;
  for (int64_t s = 0; s < in.num_seqs(); ++s) {
    const int64_t len = in.seq_lens[s], q0 = in.query_start[s], qn = in.query_start[s + 1] - q0;
    auto kv_at = [&](int64_t key, int64_t kvh) {  // element offset of (key, kv head) in the cache
      const int64_t blk = in.block_table[s * in.max_blocks_per_seq + key / bs];
      return ((blk * bs + key % bs) * KV + kvh) * stride;
    };
    for (int64_t i = 0; i < qn; ++i) {
      const int64_t pos = len - qn + i, first = W > 0 && pos - W + 1 > 0 ? pos - W + 1 : 0;
      for (int64_t h = 0; h < H; ++h) {
        const float* qr = &q[((q0 + i) * H + h) * D];
        p.assign(static_cast<std::size_t>(pos - first + 1), 0.0f);
        float mx = -INFINITY;
        for (int64_t j = first; j <= pos; ++j) {
          const float* kr = &k[kv_at(j, h / G)];
          float dot = 0.0f;
          for (int64_t d = 0; d < D; ++d) dot += qr[d] * kr[d];
          p[j - first] = dot * scale;
          mx = std::max(mx, p[j - first]);
        }
        float sum = 0.0f;
        for (auto& x : p) sum += (x = std::exp(x - mx));
        float* o = &out[((q0 + i) * H + h) * D];
        for (int64_t j = first; j <= pos; ++j) {
          const float* vr = &v[kv_at(j, h / G)];
          for (int64_t d = 0; d < D; ++d) o[d] += p[j - first] * vr[d];
        }
        for (int64_t d = 0; d < D; ++d) o[d] /= sum;
      }
    }
  }
  return out;
}

template std::vector<float> attention_reference<float>(const attention_inputs<float>&);
template std::vector<float> attention_reference<bf16>(const attention_inputs<bf16>&);
template std::vector<float> attention_reference<fp16>(const attention_inputs<fp16>&);

output_comparison compare_output(const std::vector<float>& out, const std::vector<float>& ref, dtype d,
                                 int64_t heads, int64_t head_size, int max_listed) {
  output_comparison c;
  const tolerance tol = tolerance_for(d);
  std::ostringstream os;
  if (out.size() != ref.size()) {
    c.mismatch = true;
    c.detail =
        "output has " + std::to_string(out.size()) + " elements, reference " + std::to_string(ref.size());
    return c;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double err = std::fabs(static_cast<double>(out[i]) - ref[i]);
    const bool ok = std::isfinite(out[i]) && err <= tol.atol + tol.rtol * std::fabs(ref[i]);
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
               std::to_string(tol.atol) + " rtol " + std::to_string(tol.rtol) + " (" + to_string(d) +
               "): " + os.str();
  return c;
}

}  // namespace headroom
