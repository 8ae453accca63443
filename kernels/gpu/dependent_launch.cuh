// Programmatic dependent launch (sm_90): a kernel launched with the `early` attribute behind another
// may become resident while that one's last blocks still run, and waits on the device, not the host,
// for it to finish. Used for the guard check behind each launch (guard_bands.cuh) and for the
// benchmarks' second launch of a decode step (launch.cuh's launch_body).
#pragma once

#include <cuda_runtime_api.h>

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

// The launch attribute (programmatic stream serialization).
inline cudaLaunchAttribute early_launch_attribute() {
  cudaLaunchAttribute a{};
  a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a.val.programmaticStreamSerializationAllowed = 1;
  return a;
}

}  // namespace headroom::gpu
