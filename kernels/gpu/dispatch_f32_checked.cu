// float instantiations of every attention body with the checked_context (dispatch.cuh).
#include "kernels/gpu/dispatch.cuh"

namespace headroom::gpu {

int launch_f32_checked(const launch_args& a, int k) { return launch_typed<float, checked_context>(a, k); }

}  // namespace headroom::gpu
