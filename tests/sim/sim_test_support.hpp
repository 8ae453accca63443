// What the simulator tests' planted-bug kernels share: blocks of two warps that keep one float per
// thread in shared memory (test_simulator.cpp, test_sim_barriers.cpp).
#pragma once

#include <cstdint>

#include "core/sim/launch.hpp"

namespace headroom::sim {

inline constexpr int64_t n_threads = 64;  // one block of two warps

// Base of a test kernel launched on `Blocks` blocks of n_threads threads, each block with one
// shared float per thread; the kernel adds its params and operator(). The shared tile's view names
// (what hazards report) are the kernel's own.
template <int64_t Blocks>
struct tile_kernel {
  struct shared_storage {
    float tile[n_threads];
  };
  template <class Params>
  static launch_dim grid(const Params&) {
    return {Blocks, 1, 1};
  }
  template <class Params>
  static launch_dim block(const Params&) {
    return {n_threads, 1, 1};
  }
};

}  // namespace headroom::sim
