// fp16 instantiations of every attention body with the gpu_context (dispatch.cuh).
#include "targets/gpu/launch/dispatch.cuh"

namespace headroom::gpu {

void launch_fp16_fast(const launch_args& a) { launch_typed<fp16, gpu_context>(a); }

}  // namespace headroom::gpu
