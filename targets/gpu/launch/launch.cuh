// The one generic __global__ launcher: body_kernel<K, Ctx> runs kernel functor K (docs/design.md "One
// kernel body, two executors") with context Ctx (gpu_context: zero cost; checked_context: device
// bounds checks) over K::grid(p) x K::block(p), its shared_storage (or the part of it that
// K::shared_bytes(p) names) in dynamic shared memory (the largest, about 64 KiB, is above the
// 48 KiB static limit). launch_body()
// validates the shape against CUDA's limits and reports launch errors through HEADROOM_CUDA_TRY.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/sim/context.hpp"
#include "core/sim/device_types.hpp"
#include "targets/gpu/launch/cuda_try.hpp"
#include "targets/gpu/launch/dependent_launch.cuh"

namespace headroom::gpu {

// Shared storage above this needs cudaFuncAttributeMaxDynamicSharedMemorySize (CUDA's default cap).
inline constexpr std::size_t default_dynamic_smem_limit = 48 * 1024;

// Launch bounds a body may declare (static constexpr int max_block_threads, min_blocks_per_sm):
// they let ptxas budget registers for the occupancy the body was tuned for.
template <class K>
constexpr int body_max_threads() {
  if constexpr (requires { K::max_block_threads; })
    return K::max_block_threads;
  else
    return 1024;
}
template <class K>
constexpr int body_min_blocks() {
  if constexpr (requires { K::min_blocks_per_sm; })
    return K::min_blocks_per_sm;
  else
    return 1;
}
// Dynamic shared memory of a launch: K::shared_bytes(p) when the body allocates only a prefix of
// its shared_storage for this shape (attend_shared.hpp), else all of it.
template <class K>
std::size_t body_shared_bytes(const typename K::params& p) {
  if constexpr (requires { K::shared_bytes(p); })
    return K::shared_bytes(p);
  else
    return sizeof(typename K::shared_storage);
}

template <class K, class Ctx>
__global__ void __launch_bounds__(body_max_threads<K>(), body_min_blocks<K>())
    body_kernel(const typename K::params p, const typename Ctx::launch_state ls) {
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  using storage = typename K::shared_storage;
  static_assert(std::is_trivially_default_constructible_v<storage>, "shared_storage must be a plain struct");
  allow_dependent_launch();  // a guard check behind this launch may become resident
  // Launched early (launch_body's `early`): wait until the previous grid is done, unless the body
  // reads its inputs first and waits itself (ctx.wait_prior_launch()).
  if constexpr (!waits_for_prior_launch<K>()) wait_for_launch_before();
  Ctx ctx(ls);
  K{}(ctx, p, *reinterpret_cast<storage*>(smem_bytes));
  ctx.finish();
}

inline void check_gpu_shape(launch_dim g, launch_dim b) {
  const bool block_ok = b.x >= 1 && b.y >= 1 && b.z >= 1 && b.count() <= 1024 && b.z <= 64;
  const bool grid_ok =
      g.x >= 0 && g.y >= 0 && g.z >= 0 && g.x <= 2147483647LL && g.y <= 65535 && g.z <= 65535;
  if (!block_ok || !grid_ok)
    throw std::invalid_argument("gpu launch: grid (" + std::to_string(g.x) + "," + std::to_string(g.y) + "," +
                                std::to_string(g.z) + ") block (" + std::to_string(b.x) + "," +
                                std::to_string(b.y) + "," + std::to_string(b.z) +
                                ") exceeds CUDA's launch limits");
}

// Raises `kernel`'s dynamic shared memory limit to K's whole storage when that is above CUDA's
// default, once per process (tried again after a throw).
template <class K, auto kernel>
void allow_body_smem() {
  constexpr std::size_t most = sizeof(typename K::shared_storage);
  if constexpr (most > default_dynamic_smem_limit) {
    static const bool raised = [] {
      HEADROOM_CUDA_TRY(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(most)));
      return true;
    }();
    (void)raised;
  }
}

// Launches `kernel` (K's body in one of the launchers: body_kernel here, case_kernel in
// case_launch.cuh) over K's grid and block for p, with `args`; an empty grid launches nothing.
// Asynchronous: the caller synchronizes. `early`: programmatic dependent launch
// (dependent_launch.cuh), the kernel waits on the device for the previous one on the stream.
template <class K, auto kernel, class... Args>
void launch_kernel_of(const typename K::params& p, cudaStream_t s, bool early, const Args&... args) {
  const launch_dim g = K::grid(p), b = K::block(p);
  check_gpu_shape(g, b);
  if (g.count() == 0) return;
  allow_body_smem<K, kernel>();
  const launch_config lc(
      dim3(static_cast<unsigned>(g.x), static_cast<unsigned>(g.y), static_cast<unsigned>(g.z)),
      dim3(static_cast<unsigned>(b.x), static_cast<unsigned>(b.y), static_cast<unsigned>(b.z)),
      body_shared_bytes<K>(p), s, early);
  HEADROOM_CUDA_TRY(cudaLaunchKernelEx(&lc.cfg, kernel, args...));
}

// Launches K once through body_kernel<K, Ctx> (launch_kernel_of).
template <class K, class Ctx>
void launch_body(const typename K::params& p, const typename Ctx::launch_state& ls, cudaStream_t s,
                 bool early = false) {
  launch_kernel_of<K, body_kernel<K, Ctx>>(p, s, early, p, ls);
}

}  // namespace headroom::gpu
