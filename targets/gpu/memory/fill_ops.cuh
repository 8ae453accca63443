// How device_memory fills its buffers in one launch (device_memory.cu includes this, nothing else):
// small inputs are staged into one host block and uploaded with one copy, then one kernel walks a
// list of operations, one per buffer: copy staged bytes into place, poison a scratch buffer past
// its host-written prefix, or make an input's values on the device (kernels/input_values.hpp, the
// host's bits). A set-up of a thousand buffers is then two calls instead of a thousand. Every
// operation is cut into tiles of 64 KiB, one block each, so that the launch takes as long as its
// bytes need, not as long as its largest buffer takes a fixed number of blocks.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/util/bisect.hpp"
#include "kernels/input_values.hpp"
#include "kernels/numeric.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom::gpu::fill {

enum class op_kind : int32_t { copy, scratch, gen_stream, gen_packed };

inline constexpr int64_t tile_bytes = 64 * 1024;  // a multiple of 16 bytes and of an element pair

struct op {
  std::byte* dst = nullptr;
  int64_t bytes = 0;  // the buffer's
  op_kind kind = op_kind::copy;
  elem_type type = elem_type::f32;  // generated values
  int64_t src = 0;                  // copy / scratch: staged offset of the bytes
  int64_t src_bytes = 0;            // scratch: the host-written prefix (the rest becomes 0xFF)
  uint64_t key = 0, key_v = 0;
  int64_t row = 0;
  int64_t tile0 = 0;  // the operation's first tile (block) in the launch
};

// An operation's tiles: at least one (the empty tail of a zero-byte buffer does nothing).
__host__ __device__ inline int64_t tiles_of(int64_t bytes) {
  return bytes > tile_bytes ? (bytes + tile_bytes - 1) / tile_bytes : 1;
}

// Elements [lo, hi) of a generated input. Element pairs (2i, 2i + 1) share one draw
// (input_values.hpp), so a thread makes a pair from one hash (lo is even: tiles hold whole pairs);
// a packed cache with an odd head size has pairs across a K/V boundary: element by element.
template <class T>
__device__ void generate(const op& p, int64_t lo, int64_t hi) {
  T* d = reinterpret_cast<T*>(p.dst);
  if (p.kind == op_kind::gen_packed && p.row % 2 != 0) {
    for (int64_t e = lo + threadIdx.x; e < hi; e += blockDim.x)
      d[e] = packed_kv_value<T>(p.key, p.key_v, p.row, e);
    return;
  }
  for (int64_t e = lo + 2 * static_cast<int64_t>(threadIdx.x); e < hi;
       e += 2 * static_cast<int64_t>(blockDim.x)) {
    uint64_t key = p.key;
    int64_t at = e;  // the stream element of d[e]
    if (p.kind == op_kind::gen_packed) {
      const int64_t row = e / (2 * p.row), j = e % (2 * p.row);
      key = j < p.row ? p.key : p.key_v;
      at = row * p.row + (j < p.row ? j : j - p.row);
    }
    const uint64_t u = mix64(key + (static_cast<uint64_t>(at) / 2 + 1) * golden_gamma);
    d[e] = from_float<T>(value_of_bits(static_cast<uint32_t>(u)));
    if (e + 1 < hi) d[e + 1] = from_float<T>(value_of_bits(static_cast<uint32_t>(u >> 32)));
  }
}

// Bytes [lo, hi) copied or poisoned in 16-byte chunks (buffers and staged bytes start 16-byte
// aligned, lo is a multiple of 16), byte by byte only in the chunk the host-written prefix ends in
// and in the buffer's last, partial chunk.
__device__ inline void copy_or_poison(const op& p, const std::byte* stage, int64_t lo, int64_t hi) {
  const int64_t prefix = p.kind == op_kind::copy ? p.bytes : p.src_bytes;
  const int64_t whole = hi / 16 * 16;
  for (int64_t b = lo + 16 * static_cast<int64_t>(threadIdx.x); b < whole;
       b += 16 * static_cast<int64_t>(blockDim.x)) {
    if (b + 16 <= prefix)
      *reinterpret_cast<uint4*>(p.dst + b) = *reinterpret_cast<const uint4*>(stage + p.src + b);
    else if (b >= prefix)
      *reinterpret_cast<uint4*>(p.dst + b) = make_uint4(~0u, ~0u, ~0u, ~0u);
    else
      for (int64_t i = b; i < b + 16; ++i) p.dst[i] = i < prefix ? stage[p.src + i] : std::byte{0xFF};
  }
  for (int64_t i = whole + threadIdx.x; i < hi; i += blockDim.x)
    p.dst[i] = i < prefix ? stage[p.src + i] : std::byte{0xFF};
}

// One block per tile: the operation whose tiles hold this block (the last with tile0 <= it), then
// its part of that operation.
__global__ void run_ops(const op* ops, int n, const std::byte* stage) {
  const int64_t tile = blockIdx.x;
  const op p = ops[last_at_or_below(n, tile, [&](int i) { return ops[i].tile0; })];
  const int64_t first = (tile - p.tile0) * tile_bytes;
  const int64_t last = first + tile_bytes < p.bytes ? first + tile_bytes : p.bytes;
  if (p.kind == op_kind::copy || p.kind == op_kind::scratch) {
    copy_or_poison(p, stage, first, last);
  } else {
    const int64_t size = p.type == elem_type::f32 ? 4 : 2;
    if (p.type == elem_type::f32)
      generate<float>(p, first / size, last / size);
    else if (p.type == elem_type::bf16)
      generate<bf16>(p, first / size, last / size);
    else
      generate<fp16>(p, first / size, last / size);
  }
}

}  // namespace headroom::gpu::fill
