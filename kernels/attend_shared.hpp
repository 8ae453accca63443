// What both attention passes (attend_simt.hpp on CUDA cores, attend_mma.hpp on tensor cores)
// share: the pass shape (attn_rows query rows of one kv head, tiles of attn_tile keys per warp per
// round), the shared storage in which every warp publishes its (m, l, accumulators), the block
// shape, and attn_combined(), which merges the warps for the bodies' stores.
#pragma once

#include <cstddef>
#include <type_traits>

#include "kernels/attention_common.hpp"

namespace headroom {

// Tuning knobs (bench sweeps override them with -D; the defaults are the measured best).
#ifndef HEADROOM_ATTN_PAIR_KEYS
#define HEADROOM_ATTN_PAIR_KEYS 2
#endif
#ifndef HEADROOM_ATTN_VBATCH
#define HEADROOM_ATTN_VBATCH 4
#endif
#ifndef HEADROOM_ATTN_WARPS
#define HEADROOM_ATTN_WARPS 8
#endif
#ifndef HEADROOM_ATTN_MIN_BLOCKS
#define HEADROOM_ATTN_MIN_BLOCKS 2
#endif
#ifndef HEADROOM_TRITON_WARP_KEYS  // keys per warp (triton_attention::block)
#define HEADROOM_TRITON_WARP_KEYS 64
#endif
#ifndef HEADROOM_FI_WARP_KEYS  // keys per warp (fi_batch_decode::block)
#define HEADROOM_FI_WARP_KEYS 256
#endif

inline constexpr int attn_rows = 8;  // query rows per pass (GQA group 8 = one pass)
inline constexpr int attn_pair_keys = HEADROOM_ATTN_PAIR_KEYS;  // keys per lane pair (scores phase)
inline constexpr int attn_tile = 16 * attn_pair_keys;           // keys per warp per round
static_assert(attn_pair_keys == 2 || attn_pair_keys == 4, "tiles of 32 or 64 keys (whole value batches)");
inline constexpr int attn_chunk = 8;                      // elements of a K chunk (16 bytes of bf16)
inline constexpr int attn_kstride = attn_rows + 4;        // floats per key in the score / probability tiles
inline constexpr int attn_vbatch = HEADROOM_ATTN_VBATCH;  // values phase: keys per batch of V loads

// Warps per block at most: the combine buffer holds W x rows x Dp floats (32 KiB for Dp <= 128).
template <int Dp>
inline constexpr int attn_max_warps = Dp <= 128 ? HEADROOM_ATTN_WARPS : (Dp == 256 ? 4 : 2);

// Blocks per SM the attention bodies' launch bounds ask for (registers: 64 K / (threads x this)).
inline constexpr int attn_min_blocks = HEADROOM_ATTN_MIN_BLOCKS;

// Threads per block at most for the attention bodies' launch bounds (targets/gpu/launch/launch.cuh).
template <int Dp>
inline constexpr int attn_max_threads = 32 * attn_max_warps<Dp>;

template <int Dp>
inline constexpr int attn_lane_dims = Dp / 32;  // values phase: dims per lane
template <int Dp>  // barrier-tracking granule of attn_shared::o (lanes write LD, stores read 8)
inline constexpr int attn_out_granule = attn_lane_dims<Dp> < attn_chunk ? attn_lane_dims<Dp> : attn_chunk;

// Which pass runs: tensor cores for bf16 / fp16 up to Dp 256, CUDA cores otherwise.
template <class T, int Dp>
inline constexpr bool attn_on_tensor_cores = (std::is_same_v<T, bf16> || std::is_same_v<T, fp16>)&&Dp <= 256;

// The CUDA-core pass's shared storage (attend_simt.hpp).
template <int Dp>
struct attn_shared_simt {
  static constexpr int W = attn_max_warps<Dp>;
  float q[attn_rows * Dp];                // the pass's rows, scaled, [row][d]
  float s[W * attn_tile * attn_kstride];  // per warp [key][row] scores
  float p[W * attn_tile * attn_kstride];  // per warp [key][row] probabilities
  float alpha[W * attn_rows];             // per warp rescale factor of the tile
  int64_t koff[2 * W * attn_tile];        // per round parity and warp: element offset of each key's row
  float o[W * attn_rows * Dp];            // per warp accumulators, [row][d]
  float ml[W * attn_rows * 2];            // per warp (m, l) of each row
};

// The tensor-core pass's (attend_mma.hpp): per warp, Stages slots of one 16-key step's K and V
// rows, each lane's own 16-byte chunks (filled by asynchronous copies, read back by the same lane,
// so no barrier); after the steps and a barrier the same memory holds the warps' accumulators (o),
// published as the CUDA-core pass does. Per-warp parts last and warp-major, so a launch of w warps
// allocates only bytes(w) (shared_bytes of the bodies): blocks of 4 warps fit 4 to an SM.
template <class T, int Dp, int Stages>
struct attn_shared_mma {
  static constexpr int W = attn_max_warps<Dp>, stages = Stages;
  static constexpr int64_t slot_elems = 2 * 2 * (Dp / 32) * 32 * attn_chunk;  // K|V x 2 rows x chunks x lanes
  static constexpr int64_t warp_stage = Stages * slot_elems;                  // elements of T per warp
  float ml[W * attn_rows * 2];
  union {
    alignas(16) T stage[W * warp_stage];
    float o[W * attn_rows * Dp];
  };
  static constexpr std::size_t bytes(int64_t warps) {
    return sizeof(attn_shared_mma) - static_cast<std::size_t>(W - warps) * warp_stage * sizeof(T);
  }
};

template <class T, int Dp, int Stages>
using attn_shared =
    std::conditional_t<attn_on_tensor_cores<T, Dp>, attn_shared_mma<T, Dp, Stages>, attn_shared_simt<Dp>>;

// Shared memory a block of `warps` warps allocates (the CUDA-core pass: all of it).
template <class T, int Dp, int Stages>
constexpr std::size_t attn_shared_bytes(int64_t warps) {
  if constexpr (attn_on_tensor_cores<T, Dp>) {
    using S = attn_shared_mma<T, Dp, Stages>;
    static_assert(sizeof(S::o) <= sizeof(S::stage), "the accumulators fit in the stage they replace");
    static_assert(sizeof(S::ml) % 16 == 0, "the stage starts 16-byte aligned");
    return S::bytes(warps);
  } else {
    return sizeof(attn_shared_simt<Dp>);
  }
}

// Threads per block for a pass whose key ranges are at most max_keys long: a warp per warp_keys
// keys (short ranges get fewer, busier warps), up to attn_max_warps.
template <int Dp>
inline launch_dim attn_block(int64_t max_keys, int64_t warp_keys) {
  int64_t w = (max_keys + warp_keys - 1) / warp_keys;
  w = w < 1 ? 1 : (w > attn_max_warps<Dp> ? attn_max_warps<Dp> : w);
  return {32, w, 1};
}

// Row m's combined state for dims [d0, d0 + attn_chunk): acc relative to the maximum M, sum L.
template <int Dp, class Ctx, class Sh>
HEADROOM_HOST_DEVICE void attn_combined(Ctx& ctx, Sh& s, int64_t m, int64_t d0, float (&acc)[attn_chunk],
                                        float& M, float& L) {
  const int64_t W = ctx.block_dim().y;
  const auto os = ctx.template shared<attn_out_granule<Dp>>(s.o, W * attn_rows * Dp, "warp_out");
  const auto mls = ctx.template shared<1>(s.ml, W * attn_rows * 2, "warp_ml");
  M = neg_inf();
  L = 0.0f;
  for (int e = 0; e < attn_chunk; ++e) acc[e] = 0.0f;
  for (int64_t w = 0; w < W; ++w) M = max_f(M, mls.load((w * attn_rows + m) * 2));
  if (M == neg_inf()) return;
  for (int64_t w = 0; w < W; ++w) {
    const float mw = mls.load((w * attn_rows + m) * 2);
    if (mw == neg_inf()) continue;
    const float wt = fast_exp(mw - M);
    L += wt * mls.load((w * attn_rows + m) * 2 + 1);
    const auto x = os.template load_vec<attn_chunk>((w * attn_rows + m) * Dp + d0);
    for (int e = 0; e < attn_chunk; ++e) acc[e] += wt * x[e];
  }
}

// Every (valid row, attn_chunk-element chunk below head_size D) of a pass, spread over the block's
// threads, with the warps' combined state: f(row, d0, acc, M, L). The bodies' stores.
template <int Dp, class Ctx, class Sh, class RowOf, class F>
HEADROOM_HOST_DEVICE void for_combined_chunks(Ctx& ctx, Sh& s, const RowOf& row_of, int64_t D, F&& f) {
  constexpr int chunks = Dp / attn_chunk;
  const int64_t n = ctx.block_dim().count();
  ctx.threads([&](const thread_idx& t) {
    for (int64_t item = t.linear; item < attn_rows * chunks; item += n) {
      const int64_t m = item / chunks, d0 = item % chunks * attn_chunk;
      const row_desc row = row_of(m);
      if (!row.valid || d0 >= D) continue;
      float acc[attn_chunk], M, L;
      attn_combined<Dp>(ctx, s, m, d0, acc, M, L);
      f(row, d0, acc, M, L);
    }
  });
}

}  // namespace headroom
