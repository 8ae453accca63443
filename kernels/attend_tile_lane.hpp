// The shape, shared storage, registers and loads of the prefill tile pass (attend_tile.hpp): a
// block of W warps owns 16 W packed query rows (warp w rows 16w .. 16w + 15), and all of its warps
// walk the same steps of tile_keys keys, staged once per block in shared memory. For lane l,
// g = l / 4, q = l % 4 (the fragments of core/sim/warp_ops.hpp):
//   q       rows g and g + 8 of the warp, dims 32j + 8q .. + 7 (one 16-byte chunk per row and j):
//           the A operand of the scores, whose 16 dims of product (j, m) are a permutation of
//           32j + 8q + 4m + {0..3} (the same on the K side, so each dot product sums the same terms).
//   K       key 8nb + g of the step at the same dims, one 16-byte shared load: the B operands of
//           two products (keys are the n of the scores).
//   S, P    S[row g | g + 8][keys 8nb + 2q, + 1] (the accumulator), and P packed to 16 bits in the
//           same places, which is the A operand of the values with no shuffle.
//   V       ldmatrix.trans of four 8x8 tiles (keys 16kb .. + 7 and + 8 .. + 15, dims 16n .. + 7 and
//           + 8 .. + 15): the B operands of dims 16n + g and 16n + 8 + g, so the lane's
//           accumulators are O[row g | g + 8][dims 8f + 2q, + 1].
// Shared rows are swizzled (tile_row_at) so that both the lanes' 16-byte loads of K and the eight
// rows of each ldmatrix tile hit all 32 banks.
#pragma once

#include "kernels/attend_mma_lane.hpp"

namespace headroom {

// Tuning knobs (bench builds override them with -D; the defaults are what was measured best).
#ifndef HEADROOM_TILE_KEYS  // keys per step at head sizes up to 128 (256: a quarter, for registers)
#define HEADROOM_TILE_KEYS 64
#endif
#ifndef HEADROOM_TILE_MIN_BLOCKS  // launch bounds: blocks per SM the registers are budgeted for
#define HEADROOM_TILE_MIN_BLOCKS 1
#endif
#ifndef HEADROOM_TILE_Q_REGS_DP  // largest padded head size whose q fragments live in registers
#define HEADROOM_TILE_Q_REGS_DP 128
#endif
#ifndef HEADROOM_TILE_WARPS  // warps per block at most at head sizes up to 128 (256: 4)
#define HEADROOM_TILE_WARPS 8
#endif
#ifndef HEADROOM_TILE_STAGES  // K/V stages: a step's copies are issued this many steps less one ahead
#define HEADROOM_TILE_STAGES 3
#endif

inline constexpr int tile_rows = 16;  // packed rows per warp (the m of m16n8k16)
inline constexpr int tile_stages = HEADROOM_TILE_STAGES;
static_assert(tile_stages >= 2, "a step's copies overlap at least the step before");
template <int Dp>
inline constexpr int tile_keys = Dp <= 128 ? HEADROOM_TILE_KEYS : HEADROOM_TILE_KEYS / 4;
static_assert(HEADROOM_TILE_KEYS % 64 == 0 && HEADROOM_TILE_KEYS <= 128, "steps of whole 16-key products");
// Warps per block at most: 128 rows, as FlashInfer's tiles; at 256 dims 64 (the accumulators alone
// are 128 registers a lane).
template <int Dp>
inline constexpr int tile_max_warps = Dp <= 128 ? HEADROOM_TILE_WARPS : 4;
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
// k % tile_stages. q holds the sweep's rows where the pass reads q from shared memory (head sizes
// above tile_q_in_regs, and the warpgroup pass); a launch allocates only the rows it uses (bytes).
template <class T, int Dp>
struct tile_shared {
  static constexpr int W = tile_max_warps<Dp>, KT = tile_keys<Dp>;
  static constexpr int64_t stage_elems = 2 * KT * Dp;
  static constexpr int64_t q_elems = W * tile_rows * Dp;
  int64_t koff[tile_stages * KT];  // element offsets of the steps' key rows (block table, once)
  alignas(1024) T kv[tile_stages * stage_elems];  // 1024: the warpgroup pass's swizzle atoms
  alignas(16) T q[q_elems];  // the sweep's q rows, [row][Dp] swizzled as the stage (last: see bytes)
  static_assert(tile_stages * stage_elems + q_elems < (int64_t{1} << 31), "32-bit shared offsets");
  // The bytes a launch of `warps` warps needs: q's rows where q_shared, else one chunk of q.
  static constexpr std::size_t bytes(int64_t warps, bool q_shared) {
    const int64_t kept = q_shared ? warps * tile_rows * Dp : attn_chunk;
    return sizeof(tile_shared) - static_cast<std::size_t>(q_elems - kept) * sizeof(T);
  }
};

// Chunk c of row r sits at chunk c ^ s(r), s(r) = 4 (r & 1) + (r / 2) % 4 (heads of 64 dims and
// more: 8 chunks a row at least). Eight consecutive rows at one chunk (an ldmatrix tile) take the
// eight 16-byte bank groups, and so do two adjacent rows at four consecutive chunks (a quarter
// warp's K or q loads: rows g, g + 1 at chunks 4j .. 4j + 3). Offsets are 32-bit: the stage and q
// are a fixed size under 2^31 elements (static_assert above).
HEADROOM_HOST_DEVICE inline int32_t tile_swizzle(int32_t row) { return ((row & 1) << 2) | ((row >> 1) & 3); }
template <int Dp>
HEADROOM_HOST_DEVICE inline int32_t tile_row_at(int32_t row, int chunk) {
  static_assert(Dp >= 64, "the swizzle needs 8 chunks a row");
  return row * Dp + (chunk ^ tile_swizzle(row)) * attn_chunk;
}
template <int Dp, int KT>
HEADROOM_HOST_DEVICE inline int32_t tile_kv_at(int slot, int kv, int key, int chunk) {
  return (slot * 2 + kv) * KT * Dp + tile_row_at<Dp>(key, chunk);
}

// The same chunk in the warpgroup pass's stage (attend_tile_wg.hpp): [slot][K|V][Dp / 64][key][64]. Stages
// and column blocks start at multiples of 1024 bytes, so the swizzle of the offset within one is the swizzle
// of the whole offset.
template <int Dp, int KT>
HEADROOM_HOST_DEVICE inline int32_t tile_wg_kv_at(int slot, int kv, int key, int chunk) {
  return (slot * 2 + kv) * KT * Dp + (chunk / 8) * KT * 64 +
         static_cast<int32_t>(sw128_at(64 * key + attn_chunk * (chunk % 8)));
}

// One lane's registers (compile-time indices only, so nvcc keeps them in registers).
template <int Dp>
struct tile_lane {
  static constexpr int J = Dp / 32, KT = tile_keys<Dp>, NB = KT / 8, KB = KT / 16, F = Dp / 8;
  uint32_t q[tile_q_in_regs<Dp> ? J : 1][2][4];  // rows g, g + 8 (from shared: block j only)
  uint32_t k[NB][4];                             // K of key 8nb + g, dims of block j
  uint32_t v[4];                                 // V: B operands of dims 16n + g, 16n + 8 + g
  float s[NB][4];                                // S, then the scaled, masked scores
  uint32_t pa[KB][4];                            // P of keys 16kb .. 16kb + 15
  float o[F][4];                                 // O: c0 c1 row g, c2 c3 row g + 8, dims 8f + 2q
  float m[2], l[2];                              // rows g, g + 8: maximum (log2 units), partial sum
  int32_t vlo[2], vhi[2];                        // rows g, g + 8: visible keys, from the sweep's first
  int32_t kofs[2], vofs[4];                      // the lane's read offsets in a stage (tile_lane_offsets)
};

// The lane's offsets in a stage, so that every read of a step is one register plus a constant.
// With a = (t.x % 4) ^ s(g) (g = t.x / 4: K key 8nb + g has the swizzle of g), K chunk 4j + q sits at
// chunk 4j ^ a = 4 (j - j % 2) + (j odd ? a ^ 4 : a): kofs[j % 2] holds the row g and that chunk.
// For ldmatrix, lane 8i + k names key 16kb + 8 (i % 2) + k (swizzle of k) at chunk 2n + i / 2;
// with b = (i / 2) ^ s(k) that is chunk 2n ^ b = 2 (n - n % 4) + 2 ((n % 4) ^ (b / 2)) + b % 2:
// vofs[n % 4] holds the row and that chunk.
template <int Dp>
HEADROOM_HOST_DEVICE inline void tile_lane_offsets(tile_lane<Dp>& r, int lane) {
  const int g = lane / 4, a = (lane % 4) ^ tile_swizzle(g);
  r.kofs[0] = g * Dp + a * attn_chunk;
  r.kofs[1] = g * Dp + (a ^ 4) * attn_chunk;
  const int i = lane / 8, k = lane % 8, b = (i / 2) ^ tile_swizzle(k);
  for (int n = 0; n < 4; ++n) r.vofs[n] = (8 * (i % 2) + k) * Dp + (2 * (n ^ (b / 2)) + b % 2) * attn_chunk;
}

template <class Ctx, int Dp>
struct tile_registers {
  decltype(make_registers<tile_lane<Dp>>(std::declval<Ctx&>())) st;
  decltype(make_registers<fvec<2>>(std::declval<Ctx&>())) red;  // lane_max / lane_sum of two rows
};

template <int Dp, class Ctx>
HEADROOM_HOST_DEVICE auto make_tile_registers(Ctx& ctx) {
  return tile_registers<Ctx, Dp>{make_registers<tile_lane<Dp>>(ctx), make_registers<fvec<2>>(ctx)};
}

// The lane's K chunks of block j of stage `slot` for the step's first 8 NB keys (and, from shared
// memory, its q chunks of j).
template <int Dp, int NB, class Ctx, class SV, class QV, class Regs>
HEADROOM_HOST_DEVICE void tile_read_k(Ctx& ctx, const SV& st, const QV& sq, Regs& rg, int slot, int j,
                                      int idle_from) {
  using L = tile_lane<Dp>;
  ctx.threads([&](const thread_idx& t) {
    if (t.y >= idle_from) return;  // a warp with no valid row: its products are never stored
    auto& r = rg.st[t];
    if constexpr (!tile_q_in_regs<Dp>) {
      const int g = t.x / 4, c = 4 * j + t.x % 4;
      HEADROOM_UNROLL
      for (int i = 0; i < 2; ++i)
        pack8(sq.template load_vec_aligned<attn_chunk>(tile_row_at<Dp>(tile_rows * t.y + g + 8 * i, c)),
              r.q[0][i]);
    }
    const int32_t base = slot * 2 * L::KT * Dp + r.kofs[j % 2] + 32 * (j - j % 2);
    HEADROOM_UNROLL
    for (int nb = 0; nb < NB; ++nb)
      pack8(st.template load_vec_aligned<attn_chunk>(base + 8 * nb * Dp), r.k[nb]);
  });
}

// The lane's V operands for keys 16kb .. 16kb + 15 and dims 16n .. 16n + 15 (one ldmatrix.trans of
// four tiles: lane 8i + k names key 16kb + 8 (i % 2) + k, dims 16n + 8 (i / 2) ..).
template <int Dp, class Ctx, class SV, class Regs>
HEADROOM_HOST_DEVICE void tile_read_v(Ctx& ctx, const SV& st, Regs& rg, int slot, int kb, int n) {
  using L = tile_lane<Dp>;
  ctx.template ldmatrix<4, true>(st, rg.st, [&](const thread_idx&, L& r) {
    return matrix_row{(slot * 2 + 1) * L::KT * Dp + r.vofs[n % 4] + 16 * kb * Dp + 16 * (n - n % 4), r.v};
  });
}

}  // namespace headroom
