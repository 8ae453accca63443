// A packaged run (targets/sim/package.hpp) as a GPU worker request: every buffer of the simulator
// memory in id order (inputs with their bytes, scratch to be poisoned), the family, the element
// type and the params as bytes. The worker points the params' handles at device buffers of exactly
// these extents, so the device runs the launch the simulator runs.
#pragma once

#include <cstring>
#include <type_traits>
#include <variant>

#include "targets/gpu/worker/wire.hpp"
#include "targets/sim/package.hpp"

namespace headroom::gpu {

template <class T>
constexpr elem_type elem_of() {
  if constexpr (std::is_same_v<T, float>) return elem_type::f32;
  else if constexpr (std::is_same_v<T, bf16>) return elem_type::bf16;
  else return elem_type::fp16;
}

constexpr family wire_family(kernel_family f) {
  return f == kernel_family::triton ? family::triton : family::fi_decode;
}

// Every buffer of m, in id order; the output's id becomes the request's download.
void add_buffers(const sim::memory& m, gpu_request& rq);

template <class T>
gpu_request to_request(const sim::memory& m, const family_params<T>& params) {
  gpu_request rq;
  rq.type = elem_of<T>();
  std::visit(
      [&](const auto& p) {
        using P = std::decay_t<decltype(p)>;
        rq.fam = wire_family(family_traits<P>::id);
        rq.params.resize(sizeof(P));
        std::memcpy(rq.params.data(), &p, sizeof(P));
      },
      params);
  add_buffers(m, rq);
  return rq;
}

}  // namespace headroom::gpu
