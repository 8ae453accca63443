// The metadata families' bodies with the zero-cost gpu_context (dispatch.cuh).
#include "targets/gpu/launch/dispatch.cuh"

namespace headroom::gpu {

void launch_meta_fast(const launch_args& a) { launch_meta<gpu_context>(a); }

}  // namespace headroom::gpu
