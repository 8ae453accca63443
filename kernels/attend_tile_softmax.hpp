// The online softmax of the prefill tile passes (attend_tile.hpp, attend_tile_wg.hpp): a step's
// scores of the lane's two rows masked where the step crosses a row's visible keys, their maxima
// and sums as trees and over the 4 lanes of a row, and P packed as the A operand of the values.
#pragma once

#include "kernels/attend_tile_stage.hpp"

namespace headroom {

// The lane type of a tile pass's registers, and its keys per step.
template <class Regs>
using tile_lane_of =
    std::remove_reference_t<decltype(std::declval<Regs&>().st[std::declval<const thread_idx&>()])>;
template <class Regs>
inline constexpr int tile_keys_of = tile_lane_of<Regs>::KT;

// op over the lane's 2 N elements of row i (0: g, 1: g + 8) in the first N blocks of a score tile,
// as a tree (no chain of N dependent operations).
template <int N, int NB, class Op>
HEADROOM_HOST_DEVICE float tile_row_reduce(const float (&s)[NB][4], int i, Op op) {
  static_assert(N <= NB && (N & (N - 1)) == 0, "a power of two of the tile's blocks");
  float x[N];
  HEADROOM_UNROLL
  for (int nb = 0; nb < N; ++nb) x[nb] = op(s[nb][2 * i], s[nb][2 * i + 1]);
  HEADROOM_UNROLL
  for (int w = N / 2; w >= 1; w /= 2) HEADROOM_UNROLL
  for (int nb = 0; nb < w; ++nb) x[nb] = op(x[nb], x[nb + w]);
  return x[0];
}

// The online softmax of step `step`'s NK scores of the lane's two rows in log2 units (scores times
// scale * log2(e), a positive scale: one fused multiply-add and one ex2 a score); only diagonal and
// edge steps are masked; leaves P in pa. Either pass's lane (the same fields).
template <class T, int NK, class Ctx, class Regs>
HEADROOM_HOST_DEVICE void tile_softmax(Ctx& ctx, const paged_attention_inputs<T>& p, Regs& rg, int64_t step) {
  using L = tile_lane_of<Regs>;
  constexpr int NB = NK / 8, KB = NK / 16;
  const int32_t k0 = static_cast<int32_t>(step) * L::KT;
  ctx.threads([&](const thread_idx& t) {
    auto& r = rg.st[t];
    const int q = t.x % 4;
    const int32_t vlo = r.vlo[0] > r.vlo[1] ? r.vlo[0] : r.vlo[1],
                  vhi = r.vhi[0] < r.vhi[1] ? r.vhi[0] : r.vhi[1];
    if (!(k0 >= vlo && k0 + NK <= vhi)) {  // only diagonal and edge steps are masked
      HEADROOM_UNROLL
      for (int nb = 0; nb < NB; ++nb) HEADROOM_UNROLL
      for (int c = 0; c < 4; ++c) {
        const int32_t key = k0 + 8 * nb + 2 * q + c % 2;
        if (!(key >= r.vlo[c / 2] && key < r.vhi[c / 2])) r.s[nb][c] = neg_inf();
      }
    }
    const auto mx = [](float a, float b) { return fmax_f(a, b); };
    rg.red[t] = {{tile_row_reduce<NB>(r.s, 0, mx), tile_row_reduce<NB>(r.s, 1, mx)}};
  });
  ctx.lane_max(rg.red, 4);  // the 4 lanes of equal g hold the same two rows
  const float sl2 = p.scale * 1.4426950408889634f;
  ctx.threads([&](const thread_idx& t) {
    auto& r = rg.st[t];
    float mu[2], alpha[2];
    HEADROOM_UNROLL
    for (int i = 0; i < 2; ++i) {
      const float mn = fmax_f(r.m[i], rg.red[t][i] * sl2);
      mu[i] = mn == neg_inf() ? 0.0f : mn;  // a row that saw no key yet: every term below is 0
      alpha[i] = fast_exp2(r.m[i] - mu[i]);
      r.m[i] = mn;
      r.l[i] *= alpha[i];
    }
    if (alpha[0] != 1.0f || alpha[1] != 1.0f) {  // the maxima moved: rescale what was summed
      HEADROOM_UNROLL
      for (int f = 0; f < L::F; ++f) HEADROOM_UNROLL
      for (int c = 0; c < 4; ++c) r.o[f][c] *= alpha[c / 2];
    }
    HEADROOM_UNROLL
    for (int nb = 0; nb < NB; ++nb) HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) r.s[nb][c] = fast_exp2(fmadd(r.s[nb][c], sl2, -mu[c / 2]));
    HEADROOM_UNROLL
    for (int kb = 0; kb < KB; ++kb) HEADROOM_UNROLL
    for (int h = 0; h < 2; ++h) {  // keys 16kb + 8h + 2q, + 1 of rows g (a0 / a2) and g + 8 (a1 / a3)
      const float(&x)[4] = r.s[2 * kb + h];
      r.pa[kb][2 * h] = pack2_rn<T>(x[0], x[1]);
      r.pa[kb][2 * h + 1] = pack2_rn<T>(x[2], x[3]);
    }
    r.l[0] += tile_row_reduce<NB>(r.s, 0, [](float a, float b) { return a + b; });
    r.l[1] += tile_row_reduce<NB>(r.s, 1, [](float a, float b) { return a + b; });
  });
}

}  // namespace headroom
