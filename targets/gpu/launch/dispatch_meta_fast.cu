// The metadata families' bodies with the zero-cost indexed_context (dispatch.cuh, case_launch.cuh).
#include "targets/gpu/launch/dispatch.cuh"

namespace headroom::gpu {

void launch_meta_fast(const launch_args& a) { launch_meta<indexed_context>(a); }

}  // namespace headroom::gpu
