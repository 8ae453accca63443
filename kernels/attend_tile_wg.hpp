// The prefill tile pass on Hopper's warpgroup products (ctx.wgmma, wgmma.mma_async m64nNk16): the
// same sweeps, steps, stages, masks and online softmax as attend_tile.hpp, with each warpgroup's
// products taking K and V straight from the shared stage instead of through the lanes' registers.
// Taken where the block is whole warpgroups (tiles of 64 and 128 rows) at padded head sizes 64 and
// 128, and the context has the instruction (the simulator always; a GPU build for sm_90a).
//   stage   [slot][K|V][Dp / 64][key][64]: rows of 64 elements (128 bytes), 16-byte chunks swizzled
//           in 1024-byte atoms (sw128_at), the layout wgmma reads with a 128-byte-swizzle descriptor.
//   q       A of the scores in the lanes' registers, mma's A layout (dims 16j + 2q, + 1 and + 8): K
//           is K-major in the stage, so both sides keep the dims' natural order.
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

// The lanes' rows (tile_row_state), zero accumulators, and q in mma's A layout: two 4-byte loads a
// row and 16 dims (zeros for a row past the sweep: every warp of a warpgroup takes part in its
// products).
template <class T, int Dp, class Ctx, class Regs>
HEADROOM_HOST_DEVICE void tile_wg_begin(Ctx& ctx, const paged_attention_inputs<T>& p, const tile_span& sp,
                                        const tile_sweep& sw, Regs& rg) {
  const auto qg = ctx.global(p.q);
  const int64_t G = sp.group, D = p.head_size;
  ctx.threads([&](const thread_idx& t) {
    auto& r = rg.st[t];
    const int q = t.x % 4;
    tile_row_state(r, p, sp, sw, t);
    HEADROOM_UNROLL
    for (int i = 0; i < 2; ++i) {
      const int64_t row = sw.base + tile_rows * t.y + t.x / 4 + 8 * i;
      const int64_t off = row > sw.last ? -1
                                        : token_offset(ctx, p.int32_offsets, sp.qo_start + row / G,
                                                       p.num_heads, D, sp.kvh * G + row % G);
      HEADROOM_UNROLL
      for (int j = 0; j < Dp / 16; ++j) HEADROOM_UNROLL
      for (int h = 0; h < 2; ++h) {
        uint32_t x = 0u;
        if (off >= 0) {
          const auto v = qg.template load_vec_aligned<2>(off + 16 * j + 8 * h + 2 * q);
          x = pack2(v[0], v[1]);
        }
        r.q[j][i + 2 * h] = x;
      }
    }
    HEADROOM_UNROLL
    for (int f = 0; f < tile_wg_lane<Dp>::F; ++f) HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) r.o[f][c] = 0.0f;
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
