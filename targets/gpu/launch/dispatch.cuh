// The body of dispatch_<type>_<context>.cu: params from the request's bytes with device pointers
// patched in (patch_refs), then the family's launch plan (kernels/families.hpp) through the
// device's Launch policy, body_kernel<K, Ctx> (launch.cuh).
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/families.hpp"
#include "targets/gpu/launch/case_launch.cuh"
#include "targets/gpu/launch/checked_context.cuh"
#include "targets/gpu/launch/dispatch.hpp"
#include "targets/gpu/launch/gpu_context.cuh"
#include "targets/gpu/launch/launch.cuh"
#include "targets/gpu/launch/planted.hpp"

namespace headroom::gpu {

// The params of the request with every buffer handle pointing at its device buffer (plus its
// offset: a view from inside the buffer to its end); a handle whose offset, extent or element size
// disagrees with the request's buffer is a malformed request.
template <class P>
P patched_params(const launch_args& a) {
  const gpu_request& rq = *a.rq;
  if (rq.params.size() != sizeof(P))
    throw std::invalid_argument("gpu request: params are " + std::to_string(rq.params.size()) +
                                " bytes, the family's struct " + std::to_string(sizeof(P)));
  P p;
  std::memcpy(static_cast<void*>(&p), rq.params.data(), sizeof(P));
  patch_refs(p, [&](const auto& r) -> void* {
    const auto id = static_cast<std::size_t>(r.id);
    if (id >= rq.buffers.size() || r.offset < 0 || r.offset > rq.buffers[id].extent ||
        r.extent != rq.buffers[id].extent - r.offset ||
        rq.buffers[id].elem_bytes != static_cast<int64_t>(sizeof(*r.data)))
      throw std::invalid_argument("gpu request: buffer_ref id " + std::to_string(r.id) +
                                  " does not match the request's buffers");
    return (*a.ptrs)[id];
  });
  return p;
}

template <class Ctx>
typename Ctx::launch_state state_of(const launch_args& a);
template <>
inline checked_context::launch_state state_of<checked_context>(const launch_args& a) {
  return {a.log};
}

// The device's Launch policy, then the caller's hook. The zero-cost bodies (indexed_context) run as
// case_kernel<K>: launched at once, or, in a campaign batch, added to the batch's groups
// (case_launch.cuh); the checked ones through body_kernel<K, checked_context>.
template <class Ctx>
struct device_launch {
  const launch_args& a;
  int k = 0;
  template <class K>
  void run(const typename K::params& p) {
    if constexpr (std::is_same_v<Ctx, indexed_context>) {
      if (a.cases) return add_case<K>(*a.cases, k++, p);
      launch_case<K>(p, a.stream);
    } else {
      launch_body<K, Ctx>(p, state_of<Ctx>(a), a.stream);
    }
    if (a.after_launch) a.after_launch(k);
    ++k;
  }
};

template <class T, class Ctx>
void launch_typed(const launch_args& a) {
  device_launch<Ctx> launch{a};
  switch (a.rq->fam) {
    case family::triton:
      return launch_family(launch, patched_params<triton_params<T>>(a));
    case family::fi_decode:
      return launch_family(launch, patched_params<fi_decode_params<T>>(a));
    case family::fi_prefill:
      return launch_family(launch, patched_params<fi_prefill_params<T>>(a));
    default:
      break;
  }
  throw std::invalid_argument("gpu request: not an attention family");
}

// The metadata families (no element type).
template <class Ctx>
void launch_meta(const launch_args& a) {
  device_launch<Ctx> launch{a};
  switch (a.rq->fam) {
    case family::fa3_scheduler:
      return launch_family(launch, patched_params<fa3_scheduler_params>(a));
    case family::request_meta:
      return launch_family(launch, patched_params<request_meta_params>(a));
    case family::mqa_metadata:
      return launch_family(launch, patched_params<mqa_metadata_params>(a));
    case family::offset_probe:
      return launch_family(launch, patched_params<offset_probe_params>(a));
    default:
      break;
  }
  throw std::invalid_argument("gpu request: not a metadata family");
}

}  // namespace headroom::gpu
