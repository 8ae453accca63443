// A kernel that is wrong on purpose (tests and the lane's planted checks): thread i stores
// out[offset + i] for i < n_store and loads in[i] for i < n_load (through an asynchronous copy into
// shared memory, so the copy's checked paths run on every context), so with n_store > extent - offset
// it writes past its buffer (guards and the checked build must see it; compute-sanitizer too), and
// with a huge offset it faults the GPU (an illegal address: isolation must keep the run alive).
// The same body runs on the simulator, which records the same accesses.
#pragma once

#include <cstdint>

#include "core/sim/context.hpp"
#include "core/sim/device_types.hpp"

namespace headroom {

struct planted_params {
  buffer_ref<float> out;
  buffer_ref<const float> in;
  int64_t n_store = 0, n_load = 0;
  int64_t offset = 0;  // first element stored
};

struct planted_store {
  using params = planted_params;
  struct shared_storage {
    alignas(16) float in[128];  // the block's loads, copied asynchronously
  };
  static constexpr int64_t threads = 128;  // one block covers 128 elements (the tile's size)

  static launch_dim grid(const params& p) {
    const int64_t n = p.n_store > p.n_load ? p.n_store : p.n_load;
    return {(n + threads - 1) / threads, 1, 1};
  }
  static launch_dim block(const params&) { return {threads, 1, 1}; }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const auto out = ctx.global(p.out);
    const auto in = ctx.global(p.in);
    const auto tile = ctx.shared(s.in, "in_tile");
    const int64_t base = ctx.block_idx().x * threads;
    ctx.threads([&](const thread_idx& t) {
      if (base + t.x < p.n_load) ctx.template copy_async<1>(tile, t.x, in, base + t.x);
    });
    ctx.async_commit();
    ctx.template async_wait<0>();
    ctx.threads([&](const thread_idx& t) {
      const int64_t i = base + t.x;
      float v = 1.0f + static_cast<float>(i);
      if (i < p.n_load) v += tile.load(t.x);
      if (i < p.n_store) out.store(p.offset + i, v);
    });
  }
};

// Its buffer handles, for patch_refs (kernels/families.hpp).
template <class F>
void for_each_ref(planted_params& p, F&& f) {
  f(p.out), f(p.in);
}

}  // namespace headroom
