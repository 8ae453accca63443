// bf16 instantiations of every attention body with the checked_context (dispatch.cuh).
#include "kernels/gpu/dispatch.cuh"

namespace headroom::gpu {

int launch_bf16_checked(const launch_args& a, int k) { return launch_typed<bf16, checked_context>(a, k); }

}  // namespace headroom::gpu
