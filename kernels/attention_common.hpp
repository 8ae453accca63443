// Pieces every attention body shares: the paged inputs, the head layout (lanes x vector chunk per
// row) of the reduce / merge kernels, chunked loads and stores, Triton's find_seq_idx, and
// HEADROOM_UNROLL. The online softmax itself is attend_range() (attend_range.hpp).
#pragma once

#include <cstdint>

#include "core/sim/context.hpp"
#include "core/sim/device_types.hpp"
#include "core/sim/host_device.hpp"
#include "kernels/numeric.hpp"
#include "kernels/offset_probe.hpp"

// Full unrolling of loops over register arrays (nvcc keeps them in registers only when every index
// is a compile-time constant), and no unrolling where a full unroll would let nvcc hoist every load
// of a loop (register pressure); the host compiler does not know the pragma. A unit built with
// HEADROOM_COMPACT_BODIES (the device-checked build, targets/gpu/CMakeLists.txt) unrolls nothing:
// the same arithmetic, arrays in local memory, a fraction of the code and of the compile time.
#if defined(__CUDACC__) && defined(HEADROOM_COMPACT_BODIES)
#define HEADROOM_UNROLL _Pragma("unroll 1")
#define HEADROOM_NO_UNROLL _Pragma("unroll 1")
#elif defined(__CUDACC__)
#define HEADROOM_UNROLL _Pragma("unroll")
#define HEADROOM_NO_UNROLL _Pragma("unroll 1")
#else
#define HEADROOM_UNROLL
#define HEADROOM_NO_UNROLL
#endif

namespace headroom {

// Triton's TILE_SIZE of the 3D decode kernel (triton_tile, docs/engines.md §5): segments are whole tiles.
inline constexpr int kv_tile_keys = 16;
// Largest head size the bodies support (the largest compile-time head layout below).
inline constexpr int64_t max_kernel_head_size = 512;

// Compile-time layout of one row (a query head of a token) for padded head sizes 64..512: `lanes`
// threads, each owning `vec` consecutive dimensions. lanes <= 32 keeps a row inside one warp
// (lane_sum); vec is 8 (16 bytes of bf16) except at 512, where 32 lanes own 16 each.
template <int Dp>
struct head_layout {
  static_assert(Dp == 64 || Dp == 128 || Dp == 256 || Dp == 512, "head layout: Dp in 64..512");
  static constexpr int lanes = Dp / 8 > 32 ? 32 : Dp / 8;
  static constexpr int vec = Dp / lanes;
};

// The inputs every attention kernel reads. Layouts (row-major): q [tokens][heads][head_size];
// k_cache / v_cache [blocks][block_size][kv_heads] rows of head_size elements, kv_row_stride apart
// (kv_offset below: two arrays, or views of one packed allocation); block_table
// [num_seqs][max_blocks_per_seq]; query_start [num_seqs + 1] (cumulative query lengths).
template <class T>
struct paged_attention_inputs {
  buffer_ref<const T> q, k_cache, v_cache;
  buffer_ref<const int32_t> block_table, seq_lens, query_start;
  int64_t num_seqs = 0, num_tokens = 0, num_heads = 0, num_kv_heads = 0, head_size = 0;
  int64_t block_size = 16, max_blocks_per_seq = 0;
  // Elements between consecutive kv-head rows of k_cache / v_cache: head_size in the separate
  // layout, 2 * head_size in vLLM's packed one (v_cache then starts head_size elements into the
  // same allocation as k_cache: buffer_ref::offset).
  int64_t kv_row_stride = 0;
  int64_t sliding_window = 0;  // 0: none; else key j is visible from position p iff p - j < window
  int64_t max_query_len = 1;
  float scale = 1.0f;          // softmax scale, 1 / sqrt(head_size)
  bool int32_offsets = false;  // q / output offsets in 32 bits (token_offset; the C6 mutant)
};

// One row as a thread sees it: valid, its token and query head, its position in the sequence.
struct row_desc {
  bool valid = false;
  int64_t token = 0, head = 0, pos = 0;
};

// `whole`: the chunk lies entirely below head_size and is vector aligned; otherwise the first
// n_valid elements are moved one at a time and the rest read as zero.
template <int V, class View>
HEADROOM_HOST_DEVICE auto load_chunk(const View& v, int64_t off, int64_t n_valid, bool whole) {
  using T = typename View::value_type;
  if (whole) return v.template load_vec<V>(off);
  vec<T, V> r;
  for (int k = 0; k < V; ++k) r[k] = k < n_valid ? v.load(off + k) : from_float<T>(0.0f);
  return r;
}

template <int V, class View>
HEADROOM_HOST_DEVICE void store_chunk(const View& v, int64_t off, int64_t n_valid, bool whole,
                                      const float (&x)[V], float scale) {
  using T = typename View::value_type;
  vec<T, V> r;
  for (int k = 0; k < V; ++k) r[k] = from_float<T>(x[k] * scale);
  if (whole) return v.template store_vec<V>(off, r);
  for (int k = 0; k < V && k < n_valid; ++k) v.store(off + k, r[k]);
}

// The element offset in k_cache / v_cache of dimension d of kv head kvh at slot `slot` of physical
// block `block`. Every K and V load of every body takes its row from here (kv_key_row), so the
// separate and the packed layout differ in kv_row_stride and in where v_cache starts, nowhere else.
template <class T>
HEADROOM_HOST_DEVICE int64_t kv_offset(const paged_attention_inputs<T>& p, int64_t block, int64_t slot,
                                       int64_t kvh, int64_t d = 0) {
  return ((block * p.block_size + slot) * p.num_kv_heads + kvh) * p.kv_row_stride + d;
}

// The row (d = 0) of `key` of request seq, its physical block read from the block table bt. Keys and
// block sizes that fit 32 bits (every key of an int32 seq_lens) take a 32-bit division: the same
// quotient, without the 64-bit division's subroutine of about 70 instructions on a GPU.
template <class T, class View>
HEADROOM_HOST_DEVICE int64_t kv_key_row(const paged_attention_inputs<T>& p, const View& bt, int64_t seq,
                                        int64_t key, int64_t kvh) {
  int64_t page, slot;
  if (key >= 0 && key <= INT32_MAX && p.block_size > 0 && p.block_size <= INT32_MAX) {
    const auto k = static_cast<uint32_t>(key), b = static_cast<uint32_t>(p.block_size);
    page = k / b, slot = k % b;
  } else {
    page = key / p.block_size, slot = key % p.block_size;
  }
  return kv_offset(p, bt.load(seq * p.max_blocks_per_seq + page), slot, kvh);
}

HEADROOM_HOST_DEVICE inline bool key_visible(const row_desc& r, int64_t key, int64_t window) {
  return key <= r.pos && (window == 0 || r.pos - key < window);
}

// Triton's find_seq_idx: the request owning q-block `target` (q_block_mode) or token `target`.
template <class View>
HEADROOM_HOST_DEVICE int64_t find_seq_idx(const View& qs, int64_t target, int64_t num_seqs, int64_t block_q,
                                          bool q_block_mode) {
  int64_t left = 0, right = num_seqs;
  while (left < right) {
    const int64_t mid = (left + right) / 2;
    const int64_t val = qs.load(mid);
    const int64_t mid_val = q_block_mode ? val / block_q + mid : val;
    if (mid_val <= target)
      left = mid + 1;
    else
      right = mid;
  }
  return left - 1;
}

}  // namespace headroom
