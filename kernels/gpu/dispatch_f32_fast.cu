// float instantiations of every attention body with the gpu_context (dispatch.cuh).
#include "kernels/gpu/dispatch.cuh"

namespace headroom::gpu {

int launch_f32_fast(const launch_args& a, int k) { return launch_typed<float, gpu_context>(a, k); }

// The planted kernel of the tests (planted.hpp): one launch, either context.
int launch_planted(const launch_args& a, int k) {
  const auto p = patched_params<planted_params>(a);
  if (k == 0) {
    if (a.checked)
      go<planted_store, checked_context>(a, p);
    else
      go<planted_store, gpu_context>(a, p);
  }
  return 1;
}

}  // namespace headroom::gpu
