// bf16 instantiations of every attention body with the checked_context (dispatch.cuh).
#include "targets/gpu/launch/dispatch.cuh"

namespace headroom::gpu {

void launch_bf16_checked(const launch_args& a) { launch_typed<bf16, checked_context>(a); }

}  // namespace headroom::gpu
