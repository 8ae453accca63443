// How device_memory fills its buffers in one launch (device_memory.cu includes this, nothing else):
// small inputs are staged into one host block and uploaded with one copy, then one kernel walks a
// list of operations, one per buffer: copy staged bytes into place, poison a scratch buffer past
// its host-written prefix, or make an input's values on the device (kernels/input_values.hpp, the
// host's bits). A set-up of a thousand buffers is then two calls instead of a thousand.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/input_values.hpp"
#include "kernels/numeric.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom::gpu::fill {

enum class op_kind : int32_t { copy, scratch, gen_stream, gen_packed };

struct op {
  std::byte* dst = nullptr;
  int64_t bytes = 0;  // the buffer's
  op_kind kind = op_kind::copy;
  elem_type type = elem_type::f32;  // generated values
  int64_t src = 0;                  // copy / scratch: staged offset of the bytes
  int64_t src_bytes = 0;            // scratch: the host-written prefix (the rest becomes 0xFF)
  uint64_t key = 0, key_v = 0;
  int64_t row = 0;
};

// Element pairs (2i, 2i + 1) share one draw (input_values.hpp), so a thread makes a pair from one
// hash; a packed cache with an odd head size has pairs across a K/V boundary: element by element.
template <class T>
__device__ void generate(const op& p, int64_t first, int64_t stride) {
  T* d = reinterpret_cast<T*>(p.dst);
  const int64_t n = p.bytes / static_cast<int64_t>(sizeof(T));
  if (p.kind == op_kind::gen_packed && p.row % 2 != 0) {
    for (int64_t e = first; e < n; e += stride) d[e] = packed_kv_value<T>(p.key, p.key_v, p.row, e);
    return;
  }
  for (int64_t e = 2 * first; e < n; e += 2 * stride) {
    uint64_t key = p.key;
    int64_t at = e;  // the stream element of d[e]
    if (p.kind == op_kind::gen_packed) {
      const int64_t row = e / (2 * p.row), j = e % (2 * p.row);
      key = j < p.row ? p.key : p.key_v;
      at = row * p.row + (j < p.row ? j : j - p.row);
    }
    const uint64_t u = mix64(key + (static_cast<uint64_t>(at) / 2 + 1) * golden_gamma);
    d[e] = from_float<T>(value_of_bits(static_cast<uint32_t>(u)));
    if (e + 1 < n) d[e + 1] = from_float<T>(value_of_bits(static_cast<uint32_t>(u >> 32)));
  }
}

// Copy / poison in 16-byte chunks (buffers and staged bytes start 16-byte aligned), byte by byte
// only in the chunk the host-written prefix ends in and in the last, partial chunk.
__device__ inline void copy_or_poison(const op& p, const std::byte* stage, int64_t first, int64_t stride) {
  const int64_t whole = p.bytes / 16;
  const int64_t prefix = p.kind == op_kind::copy ? p.bytes : p.src_bytes;
  for (int64_t c = first; c < whole; c += stride) {
    const int64_t b = c * 16;
    if (b + 16 <= prefix)
      *reinterpret_cast<uint4*>(p.dst + b) = *reinterpret_cast<const uint4*>(stage + p.src + b);
    else if (b >= prefix)
      *reinterpret_cast<uint4*>(p.dst + b) = make_uint4(~0u, ~0u, ~0u, ~0u);
    else
      for (int64_t i = b; i < b + 16; ++i) p.dst[i] = i < prefix ? stage[p.src + i] : std::byte{0xFF};
  }
  for (int64_t i = whole * 16 + first; i < p.bytes; i += stride)
    p.dst[i] = i < prefix ? stage[p.src + i] : std::byte{0xFF};
}

// gridDim.y operations at a time, each walked by the gridDim.x blocks of its row.
__global__ void run_ops(const op* ops, int n, const std::byte* stage) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int o = static_cast<int>(blockIdx.y); o < n; o += static_cast<int>(gridDim.y)) {
    const op p = ops[o];
    if (p.kind == op_kind::copy || p.kind == op_kind::scratch)
      copy_or_poison(p, stage, first, stride);
    else if (p.type == elem_type::f32)
      generate<float>(p, first, stride);
    else if (p.type == elem_type::bf16)
      generate<bf16>(p, first, stride);
    else
      generate<fp16>(p, first, stride);
  }
}

}  // namespace headroom::gpu::fill
