// The device side of a campaign batch's output check (batch.cu includes this, nothing else): one
// warp per (token, head) row of every attention case of one element type computes the fp32
// reference of the row (the host reference's definition, kernels/reference_row.hpp, summed in
// another order: an online softmax over the keys) and compares the case's output row with it,
// counting bad and never-written elements into the case's verdict.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/attention_common.hpp"
#include "kernels/reference_row.hpp"

namespace headroom::gpu::batch {

struct verdict_stats {
  unsigned long long bad = 0, unwritten = 0;
  unsigned int max_err_bits = 0;  // a non-negative float's bits order as the float does
  unsigned long long first_bad = ~0ull;
};

template <class T>
struct verdict_job {
  reference_view<T> view;
  const T* out = nullptr;
  int64_t seqs = 0;  // requests (query_start has seqs + 1 entries)
  int64_t rows = 0;  // covered tokens x heads
  int64_t row0 = 0;  // this job's first row in the launch
  double atol = 0, rtol = 0;
  verdict_stats* stats = nullptr;
};

template <class T>
__device__ bool poisoned(T v) {
  if constexpr (sizeof(T) == 4)
    return __float_as_uint(*reinterpret_cast<const float*>(&v)) == 0xFFFFFFFFu;
  else
    return reinterpret_cast<const uint16_t&>(v) == 0xFFFFu;
}

// One warp per row: the lanes split the head dimension (lane owns d = lane + 32 k), sum each key's
// score across the warp and keep an online softmax over the visible keys in order, so a row of
// thousands of keys costs head_size / 32 products per key and lane. (An empty row, pos < first,
// divides 0 by 0: NaN, a mismatch, as on the host.)
template <class T>
__global__ void verdict_rows(const verdict_job<T>* jobs, int n_jobs, int64_t total_rows) {
  constexpr int per_lane = static_cast<int>(max_kernel_head_size / 32);
  const int64_t r = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (r >= total_rows) return;  // a whole warp: r is the same for its lanes
  int lo = 0, hi = n_jobs;      // the last job whose first row is <= r
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (jobs[mid].row0 <= r ? lo : hi) = mid;
  }
  const verdict_job<T>& j = jobs[lo];
  const reference_view<T>& v = j.view;
  const int64_t local = r - j.row0, H = v.heads, D = v.head_size, G = H / v.kv_heads, bs = v.block_size;
  const int64_t t = local / H, h = local % H;
  int64_t s = 0, s1 = j.seqs;  // the request holding token t: query_start[s] <= t < query_start[s + 1]
  while (s1 - s > 1) {
    const int64_t mid = (s + s1) / 2;
    (v.query_start[mid] <= t ? s : s1) = mid;
  }
  const int64_t len = v.seq_lens[s], qn = v.query_start[s + 1] - v.query_start[s];
  const int64_t pos = len - qn + (t - v.query_start[s]);
  const int64_t first = v.window > 0 && pos - v.window + 1 > 0 ? pos - v.window + 1 : 0;
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  const T* qr = v.q + (t * H + h) * D;
  float o[per_lane], m = -INFINITY, l = 0.0f;
#pragma unroll
  for (int k = 0; k < per_lane; ++k) o[k] = 0.0f;
  // Keys in groups of `step`: their scores summed across the warp together (independent shuffle
  // chains), then one update of the running maximum and sum.
  constexpr int step = 4;
  for (int64_t key0 = first; key0 <= pos; key0 += step) {
    int64_t row[step];
    float score[step];
#pragma unroll
    for (int u = 0; u < step; ++u) {
      const int64_t key = key0 + u <= pos ? key0 + u : pos;  // past the end: a repeat, weight 0 below
      row[u] = ((v.block_table[s * v.width + key / bs] * bs + key % bs) * v.kv_heads + h / G) * v.stride;
      float part = 0.0f;
#pragma unroll
      for (int k = 0; k < per_lane; ++k)
        if (lane + 32 * k < D) part += to_float(qr[lane + 32 * k]) * to_float(v.k[row[u] + lane + 32 * k]);
      score[u] = part;
    }
    for (int off = 16; off > 0; off /= 2)
#pragma unroll
      for (int u = 0; u < step; ++u) score[u] += __shfl_xor_sync(0xFFFFFFFFu, score[u], off);
    float m2 = m;
#pragma unroll
    for (int u = 0; u < step; ++u) m2 = key0 + u <= pos ? fmaxf(m2, score[u] * scale) : m2;
    const float keep = expf(m - m2);  // 0 at the first group
    float p[step];
#pragma unroll
    for (int u = 0; u < step; ++u) p[u] = key0 + u <= pos ? expf(score[u] * scale - m2) : 0.0f;
    l *= keep;
#pragma unroll
    for (int u = 0; u < step; ++u) l += p[u];
#pragma unroll
    for (int k = 0; k < per_lane; ++k) {
      if (lane + 32 * k >= D) continue;
      float acc = o[k] * keep;
#pragma unroll
      for (int u = 0; u < step; ++u) acc += p[u] * to_float(v.v[row[u] + lane + 32 * k]);
      o[k] = acc;
    }
    m = m2;
  }
  unsigned long long bad = 0, unwritten = 0, first_bad = ~0ull;
  float worst = 0.0f;
#pragma unroll
  for (int k = 0; k < per_lane; ++k) {
    if (lane + 32 * k >= D) continue;
    const int64_t e = (t * H + h) * D + lane + 32 * k;
    const T x = j.out[e];
    const float xf = to_float(x), ref = o[k] / l;
    unwritten += poisoned(x) ? 1 : 0;
    if (isfinite(xf)) worst = fmaxf(worst, fabsf(xf - ref));
    if (!within_tolerance(xf, ref, j.atol, j.rtol)) {
      ++bad;
      first_bad =
          first_bad < static_cast<unsigned long long>(e) ? first_bad : static_cast<unsigned long long>(e);
    }
  }
  if (bad) atomicAdd(&j.stats->bad, bad), atomicMin(&j.stats->first_bad, first_bad);
  if (unwritten) atomicAdd(&j.stats->unwritten, unwritten);
  if (worst > 0.0f) atomicMax(&j.stats->max_err_bits, __float_as_uint(worst));
}

}  // namespace headroom::gpu::batch
