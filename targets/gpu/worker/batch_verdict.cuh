// The device side of a campaign batch's output check (batch.cu includes this, nothing else): one
// thread per (token, head) row of every attention case of one element type computes the fp32
// reference row (kernels/reference_row.hpp, the host reference's code) and compares the case's
// output row with it, counting bad and never-written elements into the case's verdict.
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
  int64_t seqs = 0;   // requests (query_start has seqs + 1 entries)
  int64_t rows = 0;   // covered tokens x heads
  int64_t row0 = 0;   // this job's first row in the launch
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

template <class T>
__global__ void verdict_rows(const verdict_job<T>* jobs, int n_jobs, int64_t total_rows) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= total_rows) return;
  int lo = 0, hi = n_jobs;  // the last job whose first row is <= r
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (jobs[mid].row0 <= r ? lo : hi) = mid;
  }
  const verdict_job<T>& j = jobs[lo];
  const int64_t local = r - j.row0, H = j.view.heads, D = j.view.head_size;
  const int64_t t = local / H, h = local % H;
  int64_t s0 = 0, s1 = j.seqs;  // the request holding token t: query_start[s] <= t < query_start[s + 1]
  while (s1 - s0 > 1) {
    const int64_t mid = (s0 + s1) / 2;
    (j.view.query_start[mid] <= t ? s0 : s1) = mid;
  }
  float ref[max_kernel_head_size];
  reference_row(j.view, s0, t - j.view.query_start[s0], h, ref);
  unsigned long long bad = 0, unwritten = 0, first = ~0ull;
  float worst = 0.0f;
  for (int64_t d = 0; d < D; ++d) {
    const int64_t e = (t * H + h) * D + d;
    const T v = j.out[e];
    const float x = to_float(v);
    unwritten += poisoned(v) ? 1 : 0;
    if (isfinite(x)) worst = fmaxf(worst, fabsf(x - ref[d]));
    if (!within_tolerance(x, ref[d], j.atol, j.rtol)) {
      ++bad;
      first = first < static_cast<unsigned long long>(e) ? first : static_cast<unsigned long long>(e);
    }
  }
  if (bad) atomicAdd(&j.stats->bad, bad), atomicMin(&j.stats->first_bad, first);
  if (unwritten) atomicAdd(&j.stats->unwritten, unwritten);
  atomicMax(&j.stats->max_err_bits, __float_as_uint(worst));
}

}  // namespace headroom::gpu::batch
