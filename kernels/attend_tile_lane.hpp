// The shape, shared storage, registers and loads of the prefill tile pass (attend_tile.hpp): a
// block of W warps owns 16 M W packed query rows (warp w rows 16 M w .. + 16 M - 1, M = tile_m: its
// M products of 16 rows), and all of its warps walk the same steps of tile_keys keys, staged once per
// block in shared memory. For lane l, g = l / 4, q = l % 4 (the fragments of core/sim/warp_ops.hpp),
// and the lane's 2 M rows i = 0 .. 2 M - 1 being warp rows 16 (i / 2) + g + 8 (i % 2):
//   q       rows i, dims 32j + 8q .. + 7 (one 16-byte chunk per row and j): the A operand of the
//           scores, whose 16 dims of product (j, m) are a permutation of 32j + 8q + 4m + {0..3}
//           (the same on the K side, so each dot product sums the same terms).
//   K       key 8nb + g of the step at the same dims, one 16-byte shared load: the B operands of
//           2 M products (keys are the n of the scores).
//   S, P    S[mt][rows 2mt, 2mt + 1][keys 8nb + 2q, + 1] (the accumulator), and P packed to 16 bits
//           in the same places, which is the A operand of the values with no shuffle.
//   V       ldmatrix.trans of four 8x8 tiles (keys 16kb .. + 7 and + 8 .. + 15, dims 16n .. + 7 and
//           + 8 .. + 15): the B operands of dims 16n + g and 16n + 8 + g for the M products, so the
//           lane's accumulators are O[mt][rows 2mt | 2mt + 1][dims 8f + 2q, + 1].
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
#ifndef HEADROOM_TILE_Q_REGS_DP  // q fragments live in registers where Dp x M is at most this
#define HEADROOM_TILE_Q_REGS_DP 128
#endif
#ifndef HEADROOM_TILE_M  // 16-row products per warp at head sizes up to 128 (256: one)
#define HEADROOM_TILE_M 2
#endif
#ifndef HEADROOM_TILE_WARPS  // warps per block at most at head sizes up to 128 (256: 4)
#define HEADROOM_TILE_WARPS 4
#endif
#ifndef HEADROOM_TILE_SUB_KEYS  // keys per sub-step (scores, softmax and P V at a time)
#define HEADROOM_TILE_SUB_KEYS 32
#endif
#ifndef HEADROOM_TILE_STAGES  // K/V stages: a step's copies are issued this many steps less one ahead
#define HEADROOM_TILE_STAGES 2
#endif

// 16-row products per warp: each K and V operand read from shared memory serves M of them.
template <int Dp>
inline constexpr int tile_m = Dp <= 128 ? HEADROOM_TILE_M : 1;
static_assert(HEADROOM_TILE_M == 1 || HEADROOM_TILE_M == 2, "one or two 16-row products per warp");
template <int Dp>
inline constexpr int tile_rows = 16 * tile_m<Dp>;  // packed rows per warp
inline constexpr int tile_stages = HEADROOM_TILE_STAGES;
static_assert(tile_stages >= 2, "a step's copies overlap at least the step before");
template <int Dp>
inline constexpr int tile_keys = Dp <= 128 ? HEADROOM_TILE_KEYS
                                           : (HEADROOM_TILE_KEYS < 64 ? 16 : HEADROOM_TILE_KEYS / 4);
static_assert(HEADROOM_TILE_KEYS % 32 == 0 && HEADROOM_TILE_KEYS <= 128, "steps of whole 16-key products");
// Keys per sub-step: a step's scores are computed, softmaxed and multiplied by V this many keys at a
// time, so that the scores and P of two 16-row products fit the registers beside the accumulators.
template <int Dp>
inline constexpr int tile_sub_keys =
    tile_keys<Dp> < HEADROOM_TILE_SUB_KEYS ? tile_keys<Dp> : HEADROOM_TILE_SUB_KEYS;
static_assert(HEADROOM_TILE_SUB_KEYS % 16 == 0 && HEADROOM_TILE_KEYS % HEADROOM_TILE_SUB_KEYS == 0,
              "whole 16-key products, whole sub-steps a step");
// Warps per block at most: 128 rows, as FlashInfer's tiles; at 256 dims 64 (the accumulators alone
// are 128 registers a lane).
template <int Dp>
inline constexpr int tile_max_warps = Dp <= 128 ? HEADROOM_TILE_WARPS : 4;
// Past this the q fragments (Dp M / 4 registers) come from shared memory every step.
template <int Dp>
inline constexpr bool tile_q_in_regs = Dp* tile_m<Dp> <= HEADROOM_TILE_Q_REGS_DP;

// Warps for tiles of cta_tile_q rows: one per tile_rows rows, up to tile_max_warps (a larger tile
// takes several sweeps).
template <int Dp>
inline launch_dim tile_block(int64_t cta_tile_q) {
  int64_t w = (cta_tile_q + tile_rows<Dp> - 1) / tile_rows<Dp>;
  w = w < 1 ? 1 : (w > tile_max_warps<Dp> ? tile_max_warps<Dp> : w);
  return {32, w, 1};
}

// Step k's K then V rows, [K|V][key][Dp], are in stage k % tile_stages, its key rows in koff slot
// k % tile_stages.
template <class T, int Dp>
struct tile_shared {
  static constexpr int W = tile_max_warps<Dp>, KT = tile_keys<Dp>;
  static constexpr int64_t stage_elems = 2 * KT * Dp;
  static constexpr int64_t q_elems = tile_q_in_regs<Dp> ? attn_chunk : W * tile_rows<Dp> * Dp;
  int64_t koff[tile_stages * KT];  // element offsets of the steps' key rows (block table, once)
  alignas(16) T kv[tile_stages * stage_elems];
  alignas(16) T q[q_elems];  // the sweep's q as A operands (tile_q_frag_at; last: see bytes)
  static_assert(tile_stages * stage_elems + q_elems < (int64_t{1} << 31), "32-bit shared offsets");
  static constexpr std::size_t bytes(int64_t warps) {
    return tile_q_in_regs<Dp>
               ? sizeof(tile_shared)
               : sizeof(tile_shared) - static_cast<std::size_t>(W - warps) * tile_rows<Dp> * Dp * sizeof(T);
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

// One lane's registers (compile-time indices only, so nvcc keeps them in registers).
template <int Dp>
struct tile_lane {
  static constexpr int M = tile_m<Dp>, R = 2 * M;  // products, rows of the lane
  static constexpr int J = Dp / 32, KT = tile_keys<Dp>, SK = tile_sub_keys<Dp>, NB = SK / 8, KB = SK / 16;
  static constexpr int F = Dp / 8;
  uint32_t q[tile_q_in_regs<Dp> ? J : 1][M][2][4];  // A operands of products (j, m) (shared: block j)
  uint32_t k[NB][4];                                // K of the sub-step's key 8nb + g, dims of block j
  uint32_t v[4];                                    // V: B operands of dims 16n + g, 16n + 8 + g
  float s[M][NB][4];                                // S of a sub-step, then its scaled, masked scores
  uint32_t pa[M][KB][4];                            // P of the sub-step's keys 16kb .. 16kb + 15
  float o[M][F][4];                                 // O: c0 c1 row 2mt, c2 c3 row 2mt + 1, dims 8f + 2q
  float m[R], l[R];                                 // rows i: maximum (log2 units), partial sum
  int32_t vlo[R], vhi[R];                           // rows i: visible keys, from the sweep's first
  int32_t kofs[2], vofs[4];                         // the lane's read offsets in a stage (tile_lane_offsets)
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

// The warp row of the lane's row i (lane group g).
HEADROOM_HOST_DEVICE inline int tile_lane_row(int g, int i) { return 16 * (i / 2) + g + 8 * (i % 2); }

template <class Ctx, int Dp>
struct tile_registers {
  decltype(make_registers<tile_lane<Dp>>(std::declval<Ctx&>())) st;
  decltype(make_registers<fvec<2 * tile_m<Dp>>>(
      std::declval<Ctx&>())) red;  // lane_max / lane_sum of the rows
};

template <int Dp, class Ctx>
HEADROOM_HOST_DEVICE auto make_tile_registers(Ctx& ctx) {
  return tile_registers<Ctx, Dp>{make_registers<tile_lane<Dp>>(ctx),
                                 make_registers<fvec<2 * tile_m<Dp>>>(ctx)};
}

// Where lane `lane` of warp w finds its A operand of 16-row product mt and scores product (j, m)
// when q is in shared memory: operand order, 16 bytes a lane, so a warp's read is 512 consecutive
// bytes and needs no rearranging into the product's registers.
template <int Dp>
HEADROOM_HOST_DEVICE inline int32_t tile_q_frag_at(int w, int mt, int j, int m, int lane) {
  return ((((w * tile_m<Dp> + mt) * (Dp / 32) + j) * 2 + m) * 32 + lane) * attn_chunk;
}

// The A operands of products (j, 0) and (j, 1) of the lane's rows g (x: dims 32j + 8q .. + 7) and
// g + 8 (y: the same dims), as 8 elements each: a0 a1 a2 a3 = x[4m ..], y[4m ..], x[4m + 2 ..],
// y[4m + 2 ..] (see the scores' permutation above).
template <class T>
HEADROOM_HOST_DEVICE inline vec<T, attn_chunk> tile_q_frag(const vec<T, attn_chunk>& x,
                                                           const vec<T, attn_chunk>& y, int m) {
  vec<T, attn_chunk> f;
  for (int h = 0; h < 2; ++h) {
    f[4 * h] = x[4 * m + 2 * h], f[4 * h + 1] = x[4 * m + 2 * h + 1];
    f[4 * h + 2] = y[4 * m + 2 * h], f[4 * h + 3] = y[4 * m + 2 * h + 1];
  }
  return f;
}

// The lane's A operands of block j (q in shared memory).
template <int Dp, class Ctx, class QV, class Regs>
HEADROOM_HOST_DEVICE void tile_read_q(Ctx& ctx, const QV& sq, Regs& rg, int j, int idle_from) {
  using L = tile_lane<Dp>;
  ctx.threads([&](const thread_idx& t) {
    if (t.y >= idle_from) return;  // a warp with no valid row: its products are never stored
    auto& r = rg.st[t];
    HEADROOM_UNROLL
    for (int mt = 0; mt < L::M; ++mt) HEADROOM_UNROLL
    for (int m = 0; m < 2; ++m)
      pack8(sq.template load_vec_aligned<attn_chunk>(tile_q_frag_at<Dp>(t.y, mt, j, m, t.x)), r.q[0][mt][m]);
  });
}

// The lane's K chunk of block j for key `key` + g of stage `slot` (key a multiple of 8) into k[nb].
template <int Dp, class Ctx, class SV, class Regs>
HEADROOM_HOST_DEVICE void tile_read_k(Ctx& ctx, const SV& st, Regs& rg, int slot, int key, int j, int nb,
                                      int idle_from) {
  using L = tile_lane<Dp>;
  ctx.threads([&](const thread_idx& t) {
    if (t.y >= idle_from) return;
    auto& r = rg.st[t];
    const int32_t at = slot * 2 * L::KT * Dp + r.kofs[j % 2] + 32 * (j - j % 2) + key * Dp;
    pack8(st.template load_vec_aligned<attn_chunk>(at), r.k[nb]);
  });
}

// The lane's V operands for keys `key` .. + 15 (a multiple of 16) and dims 16n .. 16n + 15 (one
// ldmatrix.trans of four tiles: lane 8i + k names key `key` + 8 (i % 2) + k, dims 16n + 8 (i / 2) ..).
template <int Dp, class Ctx, class SV, class Regs>
HEADROOM_HOST_DEVICE void tile_read_v(Ctx& ctx, const SV& st, Regs& rg, int slot, int key, int n) {
  using L = tile_lane<Dp>;
  ctx.template ldmatrix_trans<4>(st, rg.st, [&](const thread_idx&, L& r) {
    return matrix_row{(slot * 2 + 1) * L::KT * Dp + r.vofs[n % 4] + key * Dp + 16 * (n - n % 4), r.v};
  });
}

}  // namespace headroom
