// The metadata families' bodies with the checked_context (dispatch.cuh).
#include "targets/gpu/launch/dispatch.cuh"

namespace headroom::gpu {

void launch_meta_checked(const launch_args& a) { launch_meta<checked_context>(a); }

}  // namespace headroom::gpu
