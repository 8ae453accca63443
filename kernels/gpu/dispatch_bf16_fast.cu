// bf16 instantiations of every attention body with the gpu_context (dispatch.cuh).
#include "kernels/gpu/dispatch.cuh"

namespace headroom::gpu {

int launch_bf16_fast(const launch_args& a, int k) { return launch_typed<bf16, gpu_context>(a, k); }

}  // namespace headroom::gpu
