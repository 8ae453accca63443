// A packaged run (targets/sim/package.hpp) as a GPU worker request: every buffer of the simulator
// memory in id order (inputs with their bytes, scratch to be poisoned), the family, the element
// type and the params as bytes. The worker points the params' handles at device buffers of exactly
// these extents, so the device runs the launch the simulator runs.
#pragma once

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <variant>
#include <vector>

#include "targets/gpu/worker/wire.hpp"
#include "targets/sim/meta_package.hpp"
#include "targets/sim/package.hpp"

namespace headroom::gpu {

template <class T>
constexpr elem_type elem_of() {
  if constexpr (std::is_same_v<T, float>)
    return elem_type::f32;
  else if constexpr (std::is_same_v<T, bf16>)
    return elem_type::bf16;
  else
    return elem_type::fp16;
}

// kernel_family and the wire's family list the kernel families in the same order.
constexpr family wire_family(kernel_family f) { return static_cast<family>(static_cast<int32_t>(f)); }

// Every buffer of m, in id order; the output's id becomes the request's download. Buffers listed in
// `no_bytes` travel without their bytes (the worker makes their values: wire_buffer::gen).
void add_buffers(const sim::memory& m, gpu_request& rq, const std::vector<int32_t>& no_bytes = {});

// The request of a packaged family (`type`: the element type of an attention family; a metadata
// family's body has none and travels as f32).
template <class Params>
gpu_request to_request(const sim::memory& m, const Params& params, elem_type type,
                       const std::vector<int32_t>& no_bytes = {}) {
  gpu_request rq;
  rq.type = type;
  std::visit(
      [&](const auto& p) {
        using P = std::decay_t<decltype(p)>;
        rq.fam = wire_family(family_traits<P>::id);
        rq.params.resize(sizeof(P));
        std::memcpy(rq.params.data(), &p, sizeof(P));
      },
      params);
  add_buffers(m, rq, no_bytes);
  return rq;
}

template <class T>
gpu_request to_request(const sim::memory& m, const family_params<T>& params,
                       const std::vector<int32_t>& no_bytes = {}) {
  return to_request(m, params, elem_of<T>(), no_bytes);
}
inline gpu_request to_request(const sim::memory& m, const meta_params& params) {
  return to_request(m, params, elem_type::f32);
}

}  // namespace headroom::gpu
