// Programmatic dependent launch (sm_90): a kernel launched with the `early` attribute behind another
// may become resident while that one's last blocks still run, and waits on the device, not the host,
// for it to finish. Used for the guard check behind each launch (guard_bands.cuh) and for the
// benchmarks' second launch of a decode step (launch.cuh's launch_body).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace headroom::gpu {

// Lets kernels launched behind this one with the attribute start early. Safe anywhere: they wait
// (below) for this whole grid before reading what it writes; launches without it are unaffected.
__device__ inline void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Waits until the grid launched before this one has finished and its writes are visible; returns
// at once when this kernel was launched without the attribute.
__device__ inline void wait_for_launch_before() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// A configuration for cudaLaunchKernelEx, with the attribute (programmatic stream serialization)
// when `early`. Not copyable: cfg points at attr.
struct launch_config {
  cudaLaunchAttribute attr{};
  cudaLaunchConfig_t cfg{};
  launch_config(dim3 grid, dim3 block, std::size_t smem, cudaStream_t s, bool early) {
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cfg.attrs = &attr;
    cfg.numAttrs = early ? 1 : 0;
  }
  launch_config(const launch_config&) = delete;
  launch_config& operator=(const launch_config&) = delete;
};

}  // namespace headroom::gpu
