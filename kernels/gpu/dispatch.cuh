// The body of dispatch_<type>_<context>.cu: params from the request's bytes with device pointers patched in
// (param_refs.hpp), then the family's launches through body_kernel<K, Ctx> (launch.cuh).
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/gpu/checked_context.cuh"
#include "kernels/gpu/dispatch.hpp"
#include "kernels/gpu/gpu_context.cuh"
#include "kernels/gpu/launch.cuh"
#include "kernels/gpu/param_refs.hpp"

namespace headroom::gpu {

template <class P>
P patched_params(const launch_args& a) {
  const gpu_request& rq = *a.rq;
  if (rq.params.size() != sizeof(P))
    throw std::invalid_argument("gpu request: params are " + std::to_string(rq.params.size()) +
                                " bytes, the family's struct " + std::to_string(sizeof(P)));
  P p;
  std::memcpy(static_cast<void*>(&p), rq.params.data(), sizeof(P));
  for_each_ref(p, [&](auto& r) {
    using ptr = decltype(r.data);
    if (r.id < 0) {
      r.data = nullptr;
      return;
    }
    const auto id = static_cast<std::size_t>(r.id);
    if (id >= rq.buffers.size() || r.extent != rq.buffers[id].extent ||
        rq.buffers[id].elem_bytes != static_cast<int64_t>(sizeof(*r.data)))
      throw std::invalid_argument("gpu request: buffer_ref id " + std::to_string(r.id) +
                                  " does not match the request's buffers");
    r.data = static_cast<ptr>((*a.ptrs)[id]);
  });
  return p;
}

template <class Ctx>
typename Ctx::launch_state state_of(const launch_args& a);
template <>
inline gpu_context::launch_state state_of<gpu_context>(const launch_args&) { return {}; }
template <>
inline checked_context::launch_state state_of<checked_context>(const launch_args& a) { return {a.log}; }

template <class K, class Ctx, class P>
void go(const launch_args& a, const P& p) {
  launch_body<K, Ctx>(p, state_of<Ctx>(a), a.stream);
}

template <class T, int Dp, class Ctx>
int launch_dp(const launch_args& a, int k) {
  switch (a.rq->fam) {
    case family::triton_3d: {
      const auto p = patched_params<triton_params<T>>(a);
      if (k == 0) go<triton_attention<T, Dp, true>, Ctx>(a, p);
      if (k == 1) go<triton_segment_reduce<T, Dp>, Ctx>(a, p);
      return 2;
    }
    case family::triton_2d: {
      const auto p = patched_params<triton_params<T>>(a);
      if (k == 0) go<triton_attention<T, Dp, false>, Ctx>(a, p);
      return 1;
    }
    case family::fi_decode: {
      const auto p = patched_params<fi_decode_params<T>>(a);
      if (k == 0) go<fi_batch_decode<T, Dp>, Ctx>(a, p);
      if (k == 1 && p.split) go<fi_merge_states<T, Dp>, Ctx>(a, p);
      return p.split ? 2 : 1;
    }
    case family::planted: break;
  }
  throw std::invalid_argument("gpu request: unknown kernel family");
}

template <class T, class Ctx>
int launch_typed(const launch_args& a, int k) {
  switch (a.rq->dp) {
    case 64: return launch_dp<T, 64, Ctx>(a, k);
    case 128: return launch_dp<T, 128, Ctx>(a, k);
    case 256: return launch_dp<T, 256, Ctx>(a, k);
    case 512: return launch_dp<T, 512, Ctx>(a, k);
  }
  throw std::invalid_argument("gpu request: head layout " + std::to_string(a.rq->dp) +
                              " is not 64, 128, 256 or 512");
}

}  // namespace headroom::gpu
