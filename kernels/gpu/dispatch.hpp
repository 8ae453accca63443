// From a request to kernel launches: the worker asks for launch k of the request's family and gets
// it launched (asynchronously) with the zero-cost or the checked context; k = -1 only counts them.
// Each (element type, context) pair's instantiations live in their own translation unit
// (dispatch_<type>_<context>.cu): the 120 body x context kernels compile in six parallel jobs.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "kernels/gpu/device_log.hpp"
#include "kernels/gpu/wire.hpp"

namespace headroom::gpu {

struct launch_args {
  const gpu_request* rq = nullptr;
  const std::vector<void*>* ptrs = nullptr;  // device pointer per buffer id
  bool checked = false;
  device_log* log = nullptr;                 // checked runs only
  cudaStream_t stream = nullptr;
};

// Launch k of the family (k = -1: none); returns how many launches the family makes.
int launch_f32_fast(const launch_args& a, int k);
int launch_f32_checked(const launch_args& a, int k);
int launch_bf16_fast(const launch_args& a, int k);
int launch_bf16_checked(const launch_args& a, int k);
int launch_fp16_fast(const launch_args& a, int k);
int launch_fp16_checked(const launch_args& a, int k);
int launch_planted(const launch_args& a, int k);

inline int launch_request(const launch_args& a, int k) {
  if (a.rq->fam == family::planted) return launch_planted(a, k);
  switch (a.rq->type) {
    case elem_type::f32: return a.checked ? launch_f32_checked(a, k) : launch_f32_fast(a, k);
    case elem_type::bf16: return a.checked ? launch_bf16_checked(a, k) : launch_bf16_fast(a, k);
    case elem_type::fp16: return a.checked ? launch_fp16_checked(a, k) : launch_fp16_fast(a, k);
  }
  return 0;
}

}  // namespace headroom::gpu
