// fp16 instantiations of every attention body with the gpu_context (dispatch.cuh).
#include "kernels/gpu/dispatch.cuh"

namespace headroom::gpu {

int launch_fp16_fast(const launch_args& a, int k) { return launch_typed<fp16, gpu_context>(a, k); }

}  // namespace headroom::gpu
