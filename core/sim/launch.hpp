// Running a kernel functor on the simulator: every block of K::grid(p) in x-fastest order, each with
// K::block(p) threads and one K::shared_storage, through a checked sim_context. Deterministic: the
// same kernel, params and memory contents give the same result, log and statistics every time.
#pragma once

#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/sim/context.hpp"
#include "core/sim/memory.hpp"
#include "core/sim/sim_context.hpp"

namespace headroom::sim {

inline void check_launch_shape(launch_dim g, launch_dim b) {
  if (b.x < 1 || b.y < 1 || b.z < 1 || b.count() > max_block_threads)
    throw std::invalid_argument("sim launch: block (" + std::to_string(b.x) + "," + std::to_string(b.y) +
                                "," + std::to_string(b.z) + ") is not 1..1024 threads");
  if (g.x < 0 || g.y < 0 || g.z < 0) throw std::invalid_argument("sim launch: negative grid dimension");
}

template <class K>
launch_result launch(memory& m, const K& kernel, const typename K::params& p, const launch_options& o = {}) {
  using storage = typename K::shared_storage;
  static_assert(
      std::is_trivially_default_constructible_v<storage> && std::is_trivially_destructible_v<storage>,
      "shared_storage must be a plain struct (it is __shared__ memory on a GPU)");
  const launch_dim g = K::grid(p), b = K::block(p);
  check_launch_shape(g, b);
  sim_context ctx(m, g, b, sizeof(storage), o);
  if constexpr (waits_for_prior_launch<K>()) ctx.body_waits_for_prior_launch();
  storage* s = ::new (static_cast<void*>(ctx.shared_base())) storage;
  for (int64_t z = 0; z < g.z; ++z)
    for (int64_t y = 0; y < g.y; ++y)
      for (int64_t x = 0; x < g.x; ++x) {
        if (!ctx.begin_block({x, y, z})) return ctx.finish();
        kernel(ctx, p, *s);
      }
  return ctx.finish();
}

}  // namespace headroom::sim
