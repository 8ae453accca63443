// The device side of a campaign batch's output check (batch.cu includes this, nothing else): the
// fp32 reference of every (token, head) row of every attention case of one element type (the host
// reference's definition, kernels/reference_row.hpp, summed in another order), compared with the
// case's output, bad and never-written elements counted into the case's verdict. Two kernels: one
// warp per work item (a chunk of a row's keys, verdict_split.hpp) keeps an online softmax over its
// keys, a lane per key, and writes its partial sums; one warp per row merges its chunks and compares.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/util/bisect.hpp"
#include "kernels/attention_common.hpp"
#include "kernels/reference_row.hpp"
#include "targets/gpu/worker/verdict_split.hpp"

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
  int64_t seqs = 0;                // requests (query_start has seqs + 1 entries)
  int64_t tokens = 0;              // covered tokens
  int64_t rows = 0;                // tokens x heads
  int64_t row0 = 0;                // this job's first row in the launch
  const int64_t* items = nullptr;  // tokens + 1 work item offsets (verdict_split.hpp)
  int64_t item0 = 0;               // this job's first work item in the launch
  int64_t chunk = 0;               // keys per work item (the last of a row takes the rest)
  float* parts = nullptr;          // per item: largest score, sum of exponentials, head_size values
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

// Both kernels are instantiated per lane count: a lane holds `per_lane` elements of a row (2, 4, 8
// or 16: head sizes up to 64, 128, 256 and 512, launched apart), so that a head size of 128 does
// not walk the 16 slots the largest needs.
inline constexpr int lane_slots[] = {2, 4, 8, 16};
inline int lane_slots_for(int64_t head_size) {
  for (int k : lane_slots)
    if (head_size <= 32 * k) return k;
  return lane_slots[3];
}
static_assert(32 * lane_slots[3] == max_kernel_head_size);

inline constexpr int verdict_threads = 128;  // both kernels' blocks: four warps

// One warp per work item, 32 keys at a time, a lane per key: each lane takes its key's score over
// the whole head dimension (q staged in shared memory), the warp updates the online softmax once per
// 32 keys (one maximum and one sum across the warp, one exponential per lane), then the lanes, each
// owning d = lane + 32 k of the output, add the 32 keys' weighted values (a key's weight and row
// handed round by shuffles). The item writes its largest score, its sum of exponentials and its
// weighted values to parts.
template <class T, int per_lane>
__global__ void __launch_bounds__(verdict_threads)
    verdict_parts(const verdict_job<T>* jobs, int n_jobs, int64_t total_items) {
  __shared__ float q_rows[verdict_threads / 32][32 * per_lane];
  const int64_t it = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (it >= total_items) return;  // a whole warp: it is the same for its lanes
  const verdict_job<T>& j = jobs[last_at_or_below(n_jobs, it, [&](int i) { return jobs[i].item0; })];
  const reference_view<T>& v = j.view;
  const int64_t local = it - j.item0, H = v.heads, D = v.head_size;
  const int64_t t = last_at_or_below(j.tokens, local, [&](int64_t i) { return j.items[i]; });
  const int64_t n = (j.items[t + 1] - j.items[t]) / H;  // the chunks of each of the token's rows
  if (n < 1) return;
  const int64_t h = (local - j.items[t]) / n, c = (local - j.items[t]) % n;
  const token_keys tk = keys_of_token(v.seq_lens, v.query_start, j.seqs, v.window, t);
  const key_range keys = chunk_range(tk.first, tk.pos, c, n, j.chunk);
  const int64_t s = tk.s, lo = keys.lo, hi = keys.hi;
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  float* q = q_rows[threadIdx.x / 32];
  const T* qr = v.q + (t * H + h) * D;
#pragma unroll
  for (int k = 0; k < per_lane; ++k)
    if (lane + 32 * k < D) q[lane + 32 * k] = to_float(qr[lane + 32 * k]);
  __syncwarp();
  float o[per_lane], m = -INFINITY, l = 0.0f;
#pragma unroll
  for (int k = 0; k < per_lane; ++k) o[k] = 0.0f;
  for (int64_t key0 = lo; key0 <= hi; key0 += 32) {
    const int64_t key = key0 + lane;
    const bool live = key <= hi;
    int64_t row = 0;
    float score = -INFINITY;
    if (live) {
      row = kv_row_of(v, s, key, h);
      const T* kr = v.k + row;
      float a[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      int64_t d = 0;
      for (; d + 4 <= D; d += 4)
#pragma unroll
        for (int u = 0; u < 4; ++u) a[u] += q[d + u] * to_float(kr[d + u]);
      for (; d < D; ++d) a[0] += q[d] * to_float(kr[d]);
      score = ((a[0] + a[1]) + (a[2] + a[3])) * scale;
    }
    float most = score;
    for (int off = 16; off > 0; off /= 2) most = fmaxf(most, __shfl_xor_sync(0xFFFFFFFFu, most, off));
    const float m2 = fmaxf(m, most);
    const float keep = expf(m - m2);  // 0 at the first group
    const float p = live ? expf(score - m2) : 0.0f;
    float sum = p;
    for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xFFFFFFFFu, sum, off);
    l = l * keep + sum;
#pragma unroll
    for (int k = 0; k < per_lane; ++k) o[k] *= keep;
    const int count = hi - key0 + 1 < 32 ? static_cast<int>(hi - key0 + 1) : 32;  // the same on every lane
#pragma unroll 4
    for (int u = 0; u < count; ++u) {
      const float pu = __shfl_sync(0xFFFFFFFFu, p, u);
      const int64_t ru = __shfl_sync(0xFFFFFFFFu, row, u);
#pragma unroll
      for (int k = 0; k < per_lane; ++k)
        if (lane + 32 * k < D) o[k] += pu * to_float(v.v[ru + lane + 32 * k]);
    }
    m = m2;
  }
  float* out = j.parts + local * (D + 2);
  if (lane == 0) out[0] = m, out[1] = l;
#pragma unroll
  for (int k = 0; k < per_lane; ++k)
    if (lane + 32 * k < D) out[2 + lane + 32 * k] = o[k];
}

// One warp per row: the row's chunks merged (each scaled by exp(its max - the row's max); a chunk
// without keys weighs 0, a row without keys is 0 / 0, NaN) and the output compared with the result.
template <class T, int per_lane>
__global__ void __launch_bounds__(verdict_threads)
    verdict_rows(const verdict_job<T>* jobs, int n_jobs, int64_t total_rows) {
  const int64_t r = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (r >= total_rows) return;
  const verdict_job<T>& j = jobs[last_at_or_below(n_jobs, r, [&](int i) { return jobs[i].row0; })];
  const int64_t local = r - j.row0, H = j.view.heads, D = j.view.head_size;
  const int64_t t = local / H, h = local % H;
  const int64_t n = (j.items[t + 1] - j.items[t]) / H;
  const float* part = j.parts + (j.items[t] + h * n) * (D + 2);
  float mx = -INFINITY;
  for (int64_t c = lane; c < n; c += 32) mx = fmaxf(mx, part[c * (D + 2)]);
  for (int off = 16; off > 0; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, off));
  float o[per_lane], l = 0.0f;
#pragma unroll
  for (int k = 0; k < per_lane; ++k) o[k] = 0.0f;
  for (int64_t c = 0; c < n; ++c) {
    const float* p = part + c * (D + 2);
    const float w = p[0] == -INFINITY ? 0.0f : expf(p[0] - mx);
    l += w * p[1];
#pragma unroll
    for (int k = 0; k < per_lane; ++k)
      if (lane + 32 * k < D) o[k] += w * p[2 + lane + 32 * k];
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
