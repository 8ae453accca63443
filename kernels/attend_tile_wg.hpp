// The prefill tile pass on Hopper's warpgroup products (ctx.wgmma, wgmma.mma_async m64nNk16): the
// same sweeps, steps, stages, masks and online softmax as attend_tile.hpp, with each warpgroup's
// products taking K and V straight from the shared stage instead of through the lanes' registers.
// Taken where the block is whole warpgroups (tiles of 64 and 128 rows) at padded head sizes 64 and
// 128, and the context has the instruction (the simulator always; a GPU build for sm_90a).
//   stage   [slot][K|V][Dp / 64][key][64]: rows of 64 elements (128 bytes), 16-byte chunks swizzled
//           in 1024-byte atoms (sw128_at), the layout wgmma reads with a 128-byte-swizzle descriptor.
//   q       A of the scores in the lanes' registers, mma's A layout (dims 16j + 2q, + 1 and + 8): K
//           is K-major in the stage, so both sides keep the dims' natural order. The sweep's q rows
//           travel to shared memory with the first stage's copies (16-byte cp.async, rows swizzled
//           as tile_row_at) and reach the registers by ldmatrix after that stage's barrier, so the
//           prologue never waits on a load of its own.
//   S, P, O the accumulators of m64n(keys)k16 and m64n(Dp)k16, the same places as the mma pass's (so
//           the softmax and the stores are shared); P is A of the values, V MN-major.
// Each step's scores are awaited before its softmax, and its values before the next step.
#pragma once

#include "kernels/attend_tile_softmax.hpp"

namespace headroom {

template <int Dp>
inline constexpr bool tile_wg_fits = Dp == 64 || Dp == 128;

// Whether a launch of cta_tile_q-row tiles takes the warpgroup pass (its own kernel: the pass's
// products stay in flight only where the kernel holds no mma pass beside it): head sizes 64 and
// 128 in blocks of whole warpgroups.
template <int Dp>
inline bool tile_wg_launch(int64_t cta_tile_q) {
  return tile_wg_fits<Dp> && tile_block<Dp>(cta_tile_q).y % 4 == 0;
}

template <int Dp>
struct tile_wg_lane {
  static constexpr int KS = Dp / 16, KT = tile_keys<Dp>, NB = KT / 8, KB = KT / 16, F = Dp / 8;
  uint32_t q[KS][4];   // A of dims 16j .. 16j + 15: rows g, g + 8
  float s[NB][4];      // S, then the scaled, masked scores
  uint32_t pa[KB][4];  // P of keys 16kb .. 16kb + 15 (A of the values)
  float o[F][4];       // O: c0 c1 row g, c2 c3 row g + 8, dims 8f + 2q
  float m[2], l[2];    // rows g, g + 8: maximum (log2 units), partial sum
  int32_t vlo[2], vhi[2];
};

template <class Ctx, int Dp>
struct tile_wg_registers {
  decltype(make_registers<tile_wg_lane<Dp>>(std::declval<Ctx&>())) st;
  decltype(make_registers<fvec<2>>(std::declval<Ctx&>())) red;
};

template <int Dp, class Ctx>
HEADROOM_HOST_DEVICE auto make_tile_wg_registers(Ctx& ctx) {
  return tile_wg_registers<Ctx, Dp>{make_registers<tile_wg_lane<Dp>>(ctx), make_registers<fvec<2>>(ctx)};
}

// The lanes' rows (tile_row_state), zero accumulators, and the sweep's q rows on their way to
// shared memory: each lane copies a quarter of its two rows (chunks q, q + 4, ...), zeros for a row
// past the sweep (every warp of a warpgroup takes part in its products). The copies join the first
// stage's group (tile_steps commits it), so a sweep without steps issues none.
template <class T, int Dp, class Ctx, class QV, class Regs>
HEADROOM_HOST_DEVICE void tile_wg_begin(Ctx& ctx, const paged_attention_inputs<T>& p, const tile_span& sp,
                                        const tile_sweep& sw, const QV& sq, Regs& rg) {
  constexpr int CPR = Dp / attn_chunk;  // chunks per row
  const auto qg = ctx.global(p.q);
  const int64_t G = sp.group, D = p.head_size;
  ctx.threads([&](const thread_idx& t) {
    auto& r = rg.st[t];
    tile_row_state(r, p, sp, sw, t);
    HEADROOM_UNROLL
    for (int f = 0; f < tile_wg_lane<Dp>::F; ++f) HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) r.o[f][c] = 0.0f;
    if (sw.steps == 0) return;
    HEADROOM_UNROLL
    for (int i = 0; i < 2; ++i) {
      const int32_t at = tile_rows * t.y + t.x / 4 + 8 * i;  // the row in the sweep
      const int64_t row = sw.base + at;
      if (row > sw.last) {
        HEADROOM_UNROLL
        for (int k = 0; k < CPR / 4; ++k)
          sq.template store_vec_aligned<attn_chunk>(tile_row_at<Dp>(at, 4 * k + t.x % 4), zero_chunk<T>());
        continue;
      }
      const tile_row_qh qh = tile_qh(sp, row);
      const int64_t off =
          token_offset(ctx, p.int32_offsets, sp.qo_start + qh.q, p.num_heads, D, sp.kvh * G + qh.h);
      HEADROOM_UNROLL
      for (int k = 0; k < CPR / 4; ++k) {
        const int c = 4 * k + t.x % 4;
        ctx.template copy_async<attn_chunk>(sq, tile_row_at<Dp>(at, c), qg, off + c * attn_chunk);
      }
    }
  });
}

// q of the warp's 16 rows from shared memory into mma's A layout, one ldmatrix of four 8x8
// matrices per 16 dims: lane 8i + k names row k + 8 (i % 2) at dims 16j + 8 (i / 2) .., so the
// matrices are a0 .. a3 (rows g, g + 8 by dims 2q, 2q + 8). After the barrier that lands the copies.
template <int Dp, class Ctx, class QV, class Regs>
HEADROOM_HOST_DEVICE void tile_wg_q(Ctx& ctx, const QV& sq, Regs& rg) {
  using L = tile_wg_lane<Dp>;
  HEADROOM_UNROLL
  for (int j = 0; j < L::KS; ++j)
    ctx.template ldmatrix<4, false>(sq, rg.st, [&](const thread_idx& t, L& r) {
      const int l = t.x, row = tile_rows * t.y + l % 8 + 8 * ((l / 8) % 2);
      return matrix_row{tile_row_at<Dp>(row, 2 * j + l / 16), r.q[j]};
    });
}

// S = Q K^T over the first NK keys of stage `slot`: Dp / 16 products, K-major B at the stage's K
// rows, awaited.
template <class T, int Dp, int NK, class Ctx, class SV, class Regs>
HEADROOM_HOST_DEVICE void tile_wg_products(Ctx& ctx, const SV& st, Regs& rg, int slot) {
  using L = tile_wg_lane<Dp>;
  ctx.threads([&](const thread_idx& t) {
    HEADROOM_UNROLL
    for (int nb = 0; nb < NK / 8; ++nb) HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) rg.st[t].s[nb][c] = 0.0f;
  });
  const int32_t k0 = slot * 2 * L::KT * Dp;
  ctx.template wgmma<T, NK, false, Dp / 16>(st, 0, rg.st, [&](L& r, int j) {
    return wgmma_operands{
        {r.q[j][0], r.q[j][1], r.q[j][2], r.q[j][3]}, &r.s[0][0], k0 + (j / 4) * L::KT * 64 + 16 * (j % 4)};
  });
  ctx.template wgmma_wait<0>(rg.st, [](L& r, auto pin) { pin(r.s); });
}

// O += P V over the first NK keys of stage `slot`: NK / 16 products, MN-major B at its V rows,
// awaited.
template <class T, int Dp, int NK, class Ctx, class SV, class Regs>
HEADROOM_HOST_DEVICE void tile_wg_values(Ctx& ctx, const SV& st, Regs& rg, int slot) {
  using L = tile_wg_lane<Dp>;
  const int32_t v0 = (slot * 2 + 1) * L::KT * Dp;
  ctx.template wgmma<T, Dp, true, NK / 16>(st, L::KT * 64, rg.st, [&](L& r, int kb) {
    return wgmma_operands{
        {r.pa[kb][0], r.pa[kb][1], r.pa[kb][2], r.pa[kb][3]}, &r.o[0][0], v0 + 16 * kb * 64};
  });
  ctx.template wgmma_wait<0>(rg.st, [](L& r, auto pin) { pin(r.o); });
}

}  // namespace headroom
