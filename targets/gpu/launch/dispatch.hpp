// From a request to kernel launches: the worker asks for the request's family to be launched with
// the zero-cost or the checked context, and gets `after_launch(k)` called behind launch k (the
// guarded run's band check, the synchronisation that attributes a fault to its launch, timing).
// Each (element type, context) pair's instantiations live in their own translation unit
// (dispatch_<type>_<context>.cu) so that the bodies compile in parallel jobs; the metadata
// families, whose bodies have no element type, are instantiated once per context
// (dispatch_meta_<context>.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "targets/gpu/launch/case_batch.hpp"
#include "targets/gpu/launch/device_log.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom::gpu {

struct launch_args {
  const gpu_request* rq = nullptr;
  const std::vector<void*>* ptrs = nullptr;  // device pointer per buffer id
  bool checked = false;
  device_log* log = nullptr;  // checked runs only
  cudaStream_t stream = nullptr;
  std::function<void(int)> after_launch;  // called behind launch k (may be empty)
  case_batch* cases = nullptr;  // zero-cost launches: added to this campaign batch instead of launched
};

// Launches the request's family (enqueued on a.stream; after_launch runs between launches).
void launch_f32_fast(const launch_args& a);
void launch_f32_checked(const launch_args& a);
void launch_bf16_fast(const launch_args& a);
void launch_bf16_checked(const launch_args& a);
void launch_fp16_fast(const launch_args& a);
void launch_fp16_checked(const launch_args& a);
void launch_meta_fast(const launch_args& a);
void launch_meta_checked(const launch_args& a);
void launch_planted(const launch_args& a);

inline void launch_request(const launch_args& a) {
  if (a.rq->fam == family::planted) return launch_planted(a);
  if (is_meta_family(a.rq->fam)) return a.checked ? launch_meta_checked(a) : launch_meta_fast(a);
  switch (a.rq->type) {
    case elem_type::f32:
      return a.checked ? launch_f32_checked(a) : launch_f32_fast(a);
    case elem_type::bf16:
      return a.checked ? launch_bf16_checked(a) : launch_bf16_fast(a);
    case elem_type::fp16:
      return a.checked ? launch_fp16_checked(a) : launch_fp16_fast(a);
  }
}

}  // namespace headroom::gpu
