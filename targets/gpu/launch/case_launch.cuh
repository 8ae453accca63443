// The zero-cost bodies' one kernel, for a single run and for a campaign batch (case_batch.hpp):
// case_kernel<K> runs K either with the params it was launched with (a single run: n == 0, the
// hardware's block indices) or, over a group of cases, with the params and block index of the case
// its block falls in. The body sees its own case's grid through indexed_context, the zero-cost
// context whose block index and grid are values instead of the hardware's, so each body is
// compiled once for both uses.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/util/bisect.hpp"
#include "targets/gpu/launch/case_batch.hpp"
#include "targets/gpu/launch/gpu_context.cuh"
#include "targets/gpu/launch/launch.cuh"

namespace headroom::gpu {

// gpu_context with the block index and grid of the case being run.
class indexed_context : public gpu_context {
 public:
  HEADROOM_HOST_DEVICE indexed_context(const launch_state& s, launch_dim block, launch_dim grid)
      : gpu_context(s), block_(block), grid_(grid) {}
  HEADROOM_HOST_DEVICE launch_dim block_idx() const { return block_; }
  HEADROOM_HOST_DEVICE launch_dim grid_dim() const { return grid_; }

 private:
  launch_dim block_, grid_;
};

template <class K>
__global__ void __launch_bounds__(body_max_threads<K>(), body_min_blocks<K>())
    case_kernel(const __grid_constant__ typename K::params p0, const std::byte* entries, int n, int stride) {
  using P = typename K::params;
  using storage = typename K::shared_storage;
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  allow_dependent_launch();  // a guard check behind this launch may become resident
  if constexpr (!waits_for_prior_launch<K>()) wait_for_launch_before();
  const P* p = &p0;
  launch_dim block{blockIdx.x, blockIdx.y, blockIdx.z}, grid{gridDim.x, gridDim.y, gridDim.z};
  if (n > 0) {
    const int64_t b = blockIdx.x;
    const std::byte* e =
        entries +
        static_cast<int64_t>(stride) * last_at_or_below(n, b, [&](int i) {
          return reinterpret_cast<const case_header*>(entries + static_cast<int64_t>(stride) * i)->block0;
        });
    const case_header& h = *reinterpret_cast<const case_header*>(e);
    const int64_t local = b - h.block0;
    grid = h.grid;
    block = block_of_case(local, grid);
    p = reinterpret_cast<const P*>(e + case_params_at);
  }
  const P params = *p;  // one copy into registers, whichever memory it came from
  indexed_context ctx({}, block, grid);
  K{}(ctx, params, *reinterpret_cast<storage*>(smem_bytes));
  ctx.finish();
}

// A single run's launch of K, with the params as the kernel's own (launch_kernel_of).
template <class K>
void launch_case(const typename K::params& p, cudaStream_t s) {
  launch_kernel_of<K, case_kernel<K>>(p, s, false, p, static_cast<const std::byte*>(nullptr), 0, 0);
}

// A group of a case_batch: its blocks in one dimension, each finding its case.
template <class K>
void launch_case_group(const std::byte* entries, int n, int stride, int64_t blocks, launch_dim block,
                       std::size_t smem, void* stream) {
  static_assert(std::is_trivially_copyable_v<typename K::params>, "params travel as bytes");
  allow_body_smem<K, case_kernel<K>>();
  case_kernel<K>
      <<<dim3(static_cast<unsigned>(blocks)),
         dim3(static_cast<unsigned>(block.x), static_cast<unsigned>(block.y), static_cast<unsigned>(block.z)),
         smem, static_cast<cudaStream_t>(stream)>>>(typename K::params{}, entries, n, stride);
  HEADROOM_CUDA_TRY(cudaGetLastError());
}

// A case's launch `step` of K into a batch (nothing launched yet); an empty grid adds nothing.
template <class K>
void add_case(case_batch& cases, int step, const typename K::params& p) {
  const launch_dim g = K::grid(p), b = K::block(p);
  check_gpu_shape(g, b);
  if (g.count() == 0) return;
  cases.add(&launch_case_group<K>, step, g, b, body_shared_bytes<K>(p), &p, sizeof(p));
}

}  // namespace headroom::gpu
