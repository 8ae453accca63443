// HEADROOM_HOST_DEVICE: marks functions that run on both sides. It expands to __host__ __device__
// only under nvcc (CuTe CUTE_HOST_DEVICE, CCCL _CCCL_HOST_DEVICE), so core/, the simulator and the
// kernel bodies build with g++ alone. HEADROOM_ON_DEVICE is true only in nvcc's device pass.
#pragma once

#if defined(__CUDACC__)
#define HEADROOM_HOST_DEVICE __host__ __device__
#define HEADROOM_FORCEINLINE __forceinline__
#else
#define HEADROOM_HOST_DEVICE
#define HEADROOM_FORCEINLINE inline __attribute__((always_inline))
#endif

#if defined(__CUDA_ARCH__)
#define HEADROOM_ON_DEVICE 1
#else
#define HEADROOM_ON_DEVICE 0
#endif
