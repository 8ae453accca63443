// The token offset of the attention bodies (docs/catalogue.md C6), and a probe that evaluates it
// for one element. A [tokens][heads][head_size] tensor (q, the output) is addressed as
// token * (heads * head_size) + head * head_size + d; with `int32` the kernel computes it in 32-bit
// integers (ctx.offset32: it wraps past 2^31 - 1, and the simulator and the device-checked build
// count the wrap), else in 64 bits. Tensors of 2^31 elements cannot be simulated, so the sim and
// gpu targets run offset_probe on the step's last token instead of the whole kernel: it calls the
// same token_offset the bodies call (attend_mma, attend_simt, the Triton stores and reduce).
#pragma once

#include <cstdint>

#include "core/sim/context.hpp"
#include "core/sim/device_types.hpp"

namespace headroom {

template <class Ctx>
HEADROOM_HOST_DEVICE int64_t token_offset(Ctx& ctx, bool int32, int64_t token, int64_t heads,
                                          int64_t head_size, int64_t head, int64_t d = 0) {
  const int64_t stride = heads * head_size, rest = head * head_size + d;
  return int32 ? ctx.offset32(token, stride, rest) : token * stride + rest;
}

struct offset_probe_params {
  buffer_ref<int64_t> out;  // probe_offset: the offset as the kernel computed it
  int64_t token = 0, heads = 0, head_size = 0;
  bool int32_offsets = false;
};

// One thread: the offset of the last element (head heads - 1, d = head_size - 1) of `token`.
struct offset_probe {
  using params = offset_probe_params;
  struct shared_storage {
    int32_t unused[2];
  };
  static launch_dim grid(const params&) { return {1, 1, 1}; }
  static launch_dim block(const params&) { return {1, 1, 1}; }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage&) const {
    const auto out = ctx.global(p.out);
    ctx.threads([&](const thread_idx&) {
      out.store(0, token_offset(ctx, p.int32_offsets, p.token, p.heads, p.head_size, p.heads - 1,
                                p.head_size - 1));
    });
  }
};

}  // namespace headroom
