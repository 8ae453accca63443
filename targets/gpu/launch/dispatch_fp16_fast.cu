// fp16 instantiations of every attention body with the zero-cost indexed_context (dispatch.cuh,
// case_launch.cuh).
#include "targets/gpu/launch/dispatch.cuh"

namespace headroom::gpu {

void launch_fp16_fast(const launch_args& a) { launch_typed<fp16, indexed_context>(a); }

}  // namespace headroom::gpu
