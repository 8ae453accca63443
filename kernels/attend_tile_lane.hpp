// The shape, shared storage, registers and loads of the prefill tile pass (attend_tile.hpp): a
// block of W warps owns 16 W packed query rows (warp w rows 16w .. 16w + 15), and all of its warps
// walk the same steps of tile_keys keys, staged once per block in shared memory (two stages). For
// lane l, g = l / 4, q = l % 4 (the fragments of core/sim/warp_ops.hpp):
//   q       rows g and g + 8 of the warp, dims 32j + 8q .. + 7 (one 16-byte chunk per row and j):
//           the A operand of the scores, whose 16 dims of product (j, m) are a permutation of
//           32j + 8q + 4m + {0..3} (the same on the K side, so each dot product sums the same terms).
//   K       key 8nb + g of the step at the same dims: the B operand (keys are the n of the scores).
//   S, P    S[row g | g + 8][keys 8nb + 2q, + 1] (the accumulator), and P packed to 16 bits in the
//           same places, which is the A operand of the values with no shuffle.
//   V       keys 16kb + g and 16kb + 8 + g at dims 32j + 8q ..: four 8x8 tiles per chunk (dims 2f,
//           2f + 1), transposed in registers (movmatrix) into the B operand of dims 32j + 8(g / 2) +
//           2f + g % 2, so the lane's accumulators are O[row g | g + 8][dims 32j + 8q + 2f, + 1]:
//           per row and j one whole 16-byte chunk, stored as one.
#pragma once

#include "kernels/attend_mma_lane.hpp"

namespace headroom {

// Tuning knobs (bench builds override them with -D; the defaults are what was measured best).
#ifndef HEADROOM_TILE_KEYS  // keys per step at head sizes up to 128 (256: 16, for registers)
#define HEADROOM_TILE_KEYS 32
#endif
#ifndef HEADROOM_TILE_MIN_BLOCKS  // launch bounds: blocks per SM the registers are budgeted for
#define HEADROOM_TILE_MIN_BLOCKS 1
#endif
#ifndef HEADROOM_TILE_Q_REGS_DP  // largest padded head size whose q fragments live in registers
#define HEADROOM_TILE_Q_REGS_DP 128
#endif
#ifndef HEADROOM_TILE_STAGES  // K/V stages: a step's copies are issued this many steps less one ahead
#define HEADROOM_TILE_STAGES 3
#endif

inline constexpr int tile_rows = 16;  // packed rows per warp (the m of m16n8k16)
inline constexpr int tile_stages = HEADROOM_TILE_STAGES;
static_assert(tile_stages >= 2, "a step's copies overlap at least the step before");
template <int Dp>
inline constexpr int tile_keys = Dp <= 128 ? HEADROOM_TILE_KEYS : 16;
static_assert(HEADROOM_TILE_KEYS % 16 == 0 && HEADROOM_TILE_KEYS <= 64, "steps of whole 16-key products");
// Warps per block at most: 128 rows, as FlashInfer's tiles; at 256 dims 64 (the accumulators alone
// are 128 registers a lane).
template <int Dp>
inline constexpr int tile_max_warps = Dp <= 128 ? 8 : 4;
// Above this head size the q fragments (Dp / 4 registers) come from shared memory every step.
template <int Dp>
inline constexpr bool tile_q_in_regs = Dp <= HEADROOM_TILE_Q_REGS_DP;

// Warps for tiles of cta_tile_q rows: one per 16 rows, up to tile_max_warps (a larger tile takes
// several sweeps).
template <int Dp>
inline launch_dim tile_block(int64_t cta_tile_q) {
  int64_t w = (cta_tile_q + tile_rows - 1) / tile_rows;
  w = w < 1 ? 1 : (w > tile_max_warps<Dp> ? tile_max_warps<Dp> : w);
  return {32, w, 1};
}

// Step k's K then V rows, [K|V][key][Dp], are in stage k % tile_stages, its key rows in koff slot
// k % tile_stages. Chunk c of a row sits at c ^ 4 (key & 1), so that the 8 lanes of a quarter warp
// (keys g, g + 1, the same 4 chunks) hit all 32 banks.
template <class T, int Dp>
struct tile_shared {
  static constexpr int W = tile_max_warps<Dp>, KT = tile_keys<Dp>;
  static constexpr int64_t stage_elems = 2 * KT * Dp;
  static constexpr int64_t q_elems = tile_q_in_regs<Dp> ? attn_chunk : W * tile_rows * Dp;
  int64_t koff[tile_stages * KT];  // element offsets of the steps' key rows (block table, once)
  alignas(16) T kv[tile_stages * stage_elems];
  alignas(16) T q[q_elems];  // the sweep's q rows, [row][Dp] swizzled as the stage (last: see bytes)
  static_assert(tile_stages * stage_elems + q_elems < (int64_t{1} << 31), "32-bit shared offsets");
  static constexpr std::size_t bytes(int64_t warps) {
    return tile_q_in_regs<Dp>
               ? sizeof(tile_shared)
               : sizeof(tile_shared) - static_cast<std::size_t>(W - warps) * tile_rows * Dp * sizeof(T);
  }
};

// Offsets into the stage and q arrays are 32-bit: both are a fixed size under 2^31 elements (the
// static_assert below), and 32-bit index arithmetic is what keeps a step's address work small.
template <int Dp>
HEADROOM_HOST_DEVICE inline int32_t tile_row_at(int32_t row, int chunk) {
  return row * Dp + (chunk ^ ((row & 1) << 2)) * attn_chunk;
}
template <int Dp, int KT>
HEADROOM_HOST_DEVICE inline int32_t tile_kv_at(int slot, int kv, int key, int chunk) {
  return (slot * 2 + kv) * KT * Dp + tile_row_at<Dp>(key, chunk);
}

// One lane's registers (compile-time indices only, so nvcc keeps them in registers).
template <int Dp>
struct tile_lane {
  static constexpr int J = Dp / 32, KT = tile_keys<Dp>, NB = KT / 8, KB = KT / 16;
  uint32_t q[tile_q_in_regs<Dp> ? J : 1][2][4];  // rows g, g + 8 (from shared: block j only)
  uint32_t kv[NB][4];                            // K of key 8nb + g; V keys g, 8 + g, transposed
  float s[NB][4];                                // S, then the scaled, masked scores
  uint32_t pa[KB][4];                            // P of keys 16kb .. 16kb + 15
  float o[J][4][4];                              // O: c0 c1 row g, c2 c3 row g + 8
  float m[2], l[2];                              // rows g, g + 8: maximum, this lane's partial sum
  int32_t vlo[2], vhi[2];                        // rows g, g + 8: visible keys, from the sweep's first
};

template <class Ctx, int Dp>
struct tile_registers {
  decltype(make_registers<tile_lane<Dp>>(std::declval<Ctx&>())) st;
  decltype(make_registers<fvec<2>>(std::declval<Ctx&>())) red;  // lane_max / lane_sum of two rows
};

template <int Dp, class Ctx>
HEADROOM_HOST_DEVICE auto make_tile_registers(Ctx& ctx) {
  return tile_registers<Ctx, Dp>{make_registers<tile_lane<Dp>>(ctx), make_registers<fvec<2>>(ctx)};
}

// The lane's K chunks of block j of stage `slot` (and, from shared memory, its q chunks of j).
template <int Dp, class Ctx, class SV, class QV, class Regs>
HEADROOM_HOST_DEVICE void tile_read_k(Ctx& ctx, const SV& st, const QV& sq, Regs& rg, int slot, int j,
                                      int64_t idle_from) {
  using L = tile_lane<Dp>;
  ctx.threads([&](const thread_idx& t) {
    if (t.y >= idle_from) return;  // a warp with no valid row: its products are never stored
    auto& r = rg.st[t];
    const int g = t.x / 4, c = 4 * j + t.x % 4;
    if constexpr (!tile_q_in_regs<Dp>) {
      HEADROOM_UNROLL
      for (int i = 0; i < 2; ++i)
        pack8(sq.template load_vec_aligned<attn_chunk>(tile_row_at<Dp>(tile_rows * t.y + g + 8 * i, c)),
              r.q[0][i]);
    }
    HEADROOM_UNROLL
    for (int nb = 0; nb < L::NB; ++nb)
      pack8(st.template load_vec_aligned<attn_chunk>(tile_kv_at<Dp, L::KT>(slot, 0, 8 * nb + g, c)),
            r.kv[nb]);
  });
}

// The lane's V chunks of keys 16kb + g, 16kb + 8 + g, block j, into kv[0], kv[1].
template <int Dp, class Ctx, class SV, class Regs>
HEADROOM_HOST_DEVICE void tile_read_v(Ctx& ctx, const SV& st, Regs& rg, int slot, int j, int kb,
                                      int64_t idle_from) {
  using L = tile_lane<Dp>;
  ctx.threads([&](const thread_idx& t) {
    if (t.y >= idle_from) return;
    auto& r = rg.st[t];
    const int g = t.x / 4, c = 4 * j + t.x % 4;
    HEADROOM_UNROLL
    for (int h = 0; h < 2; ++h)
      pack8(st.template load_vec_aligned<attn_chunk>(tile_kv_at<Dp, L::KT>(slot, 1, 16 * kb + 8 * h + g, c)),
            r.kv[h]);
  });
}

}  // namespace headroom
