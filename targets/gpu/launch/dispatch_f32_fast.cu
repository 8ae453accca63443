// float instantiations of every attention body with the zero-cost indexed_context (dispatch.cuh,
// case_launch.cuh).
#include "targets/gpu/launch/dispatch.cuh"

namespace headroom::gpu {

void launch_f32_fast(const launch_args& a) { launch_typed<float, indexed_context>(a); }

// The planted kernel of the tests (planted.hpp): one launch, either context.
void launch_planted(const launch_args& a) {
  const auto p = patched_params<planted_params>(a);
  if (a.checked)
    device_launch<checked_context>{a}.template run<planted_store>(p);
  else
    device_launch<indexed_context>{a}.template run<planted_store>(p);
}

}  // namespace headroom::gpu
