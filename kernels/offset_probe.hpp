// The token offset of the attention bodies (docs/catalogue.md C6), and a probe that evaluates it
// for one element. A [tokens][heads][head_size] view (q, the output) is addressed as
// token * row_stride + head * head_size + d: row_stride is heads * head_size when contiguous, the
// projection's row for q as a view of a fused qkv projection. With `int32` the kernel computes it
// in 32-bit integers (ctx.offset32: it wraps past 2^31 - 1, and the simulator and the
// device-checked build count the wrap), else in 64 bits. Tensors of 2^31 elements cannot be
// simulated, so the sim and gpu targets run offset_probe on the step's last token instead of the
// whole kernel: it calls token_offset_strided, which the bodies' token_offset calls (attend_mma,
// attend_simt, the Triton stores and reduce).
#pragma once

#include <cstdint>

#include "core/sim/context.hpp"
#include "core/sim/device_types.hpp"

namespace headroom {

// token * row_stride + rest, in 32 bits (wrapping, counted) or 64.
template <class Ctx>
HEADROOM_HOST_DEVICE int64_t token_offset_strided(Ctx& ctx, bool int32, int64_t token, int64_t row_stride,
                                                  int64_t rest) {
  return int32 ? ctx.offset32(token, row_stride, rest) : token * row_stride + rest;
}

template <class Ctx>
HEADROOM_HOST_DEVICE int64_t token_offset(Ctx& ctx, bool int32, int64_t token, int64_t heads,
                                          int64_t head_size, int64_t head, int64_t d = 0) {
  return token_offset_strided(ctx, int32, token, heads * head_size, head * head_size + d);
}

struct offset_probe_params {
  buffer_ref<int64_t> out;  // probe_offset: the offset as the kernel computed it
  int64_t token = 0, heads = 0, head_size = 0;
  int64_t row_stride = 0;  // the view's token stride (fused-qkv q); 0: heads * head_size
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
      const int64_t stride = p.row_stride > 0 ? p.row_stride : p.heads * p.head_size;
      const int64_t last = p.heads * p.head_size - 1;  // head heads - 1, d head_size - 1
      out.store(0, token_offset_strided(ctx, p.int32_offsets, p.token, stride, last));
    });
  }
};

}  // namespace headroom
