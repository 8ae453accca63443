// float instantiations of every attention body with the checked_context (dispatch.cuh).
#include "targets/gpu/launch/dispatch.cuh"

namespace headroom::gpu {

void launch_f32_checked(const launch_args& a) { launch_typed<float, checked_context>(a); }

}  // namespace headroom::gpu
