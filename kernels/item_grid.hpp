// The launch shape of bodies that give one thread to each item of a range (the metadata bodies):
// blocks of 128 threads, as many as the items need, and no shared memory.
#pragma once

#include <cstdint>

#include "core/sim/context.hpp"
#include "core/sim/device_types.hpp"

namespace headroom {

struct item_grid {
  static constexpr int64_t threads = 128;
  struct shared_storage {
    int32_t unused[2];
  };
  static launch_dim grid_for(int64_t items) { return {(items + threads - 1) / threads, 1, 1}; }
  static launch_dim block_for() { return {threads, 1, 1}; }

  // f(i) for every item i < items, by the thread that owns it.
  template <class Ctx, class F>
  HEADROOM_HOST_DEVICE static void for_items(Ctx& ctx, int64_t items, F&& f) {
    const int64_t base = ctx.block_idx().x * threads;
    ctx.threads([&](const thread_idx& t) {
      if (base + t.x < items) f(base + t.x);
    });
  }
};

}  // namespace headroom
