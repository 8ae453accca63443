// attend_tile(): the prefill tile pass (FlashAttention-2 / FlashInfer's prefill), for bf16 / fp16
// at padded head sizes up to 256 with whole, aligned rows (mma_rows_aligned). A block of W warps
// takes its packed query rows in sweeps of 16 W (one sweep for tiles up to 128 rows); warp w owns
// rows 16w .. 16w + 15 of the sweep and keeps their whole online-softmax state in registers, and
// every warp walks the same steps of tile_keys keys, which the block stages once in shared memory
// (cp.async, tile_stages stages: a step's copies run while the steps before compute; one barrier
// per step). Both products are mma.m16n8k16 (layouts in attend_tile_lane.hpp). Steps cover only the
// keys some row of the sweep sees (causal end, window start); a step that lies inside the visible
// range of both of a lane's rows is not masked. No cross-warp combine: each lane stores its own
// rows, 16 bytes at a time.
#pragma once

#include "kernels/attend_tile_stage.hpp"

namespace headroom {

// S = Q K^T over step `step`'s keys, then the online softmax of the lane's two rows; leaves P in pa.
template <class T, int Dp, class Ctx, class SV, class QV, class Regs>
HEADROOM_HOST_DEVICE void tile_scores(Ctx& ctx, const paged_attention_inputs<T>& p, const SV& st,
                                      const QV& sq, Regs& rg, const tile_sweep& sw, int64_t step, int slot) {
  using L = tile_lane<Dp>;
  ctx.threads([&](const thread_idx& t) {
    HEADROOM_UNROLL
    for (int nb = 0; nb < L::NB; ++nb) HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) rg.st[t].s[nb][c] = 0.0f;
  });
  HEADROOM_UNROLL
  for (int j = 0; j < L::J; ++j) {
    tile_read_k<Dp>(ctx, st, sq, rg, slot, j, sw.idle_from);
    const int qj = tile_q_in_regs<Dp> ? j : 0;
    HEADROOM_UNROLL
    for (int nb = 0; nb < L::NB; ++nb) HEADROOM_UNROLL
    for (int m = 0; m < 2; ++m)
      ctx.template mma_m16n8k16<T>(rg.st, [&](L& r) {
        return mma_operands{
            {r.q[qj][0][2 * m], r.q[qj][1][2 * m], r.q[qj][0][2 * m + 1], r.q[qj][1][2 * m + 1]},
            {r.kv[nb][2 * m], r.kv[nb][2 * m + 1]},
            r.s[nb]};
      });
  }
  const int32_t k0 = static_cast<int32_t>(step) * L::KT;
  ctx.threads([&](const thread_idx& t) {
    auto& r = rg.st[t];
    const int q = t.x % 4;
    const int32_t vlo = r.vlo[0] > r.vlo[1] ? r.vlo[0] : r.vlo[1],
                  vhi = r.vhi[0] < r.vhi[1] ? r.vhi[0] : r.vhi[1];
    const bool inside = k0 >= vlo && k0 + L::KT <= vhi;  // only diagonal and edge steps are masked
    float mx[2] = {neg_inf(), neg_inf()};
    HEADROOM_UNROLL
    for (int nb = 0; nb < L::NB; ++nb) HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) {
      const int i = c / 2;
      const int32_t key = k0 + 8 * nb + 2 * q + c % 2;
      float x = r.s[nb][c] * p.scale;
      if (!inside && !(key >= r.vlo[i] && key < r.vhi[i])) x = neg_inf();
      r.s[nb][c] = x;
      mx[i] = max_f(mx[i], x);
    }
    rg.red[t] = {{mx[0], mx[1]}};
  });
  ctx.lane_max(rg.red, 4);  // the 4 lanes of equal g hold the same two rows
  ctx.threads([&](const thread_idx& t) {
    auto& r = rg.st[t];
    float mn[2], alpha[2], pr[L::NB][4];
    HEADROOM_UNROLL
    for (int i = 0; i < 2; ++i) {
      mn[i] = max_f(r.m[i], rg.red[t][i]);
      alpha[i] = mn[i] == neg_inf() ? 1.0f : fast_exp(r.m[i] - mn[i]);
      r.m[i] = mn[i];
      r.l[i] *= alpha[i];
    }
    HEADROOM_UNROLL
    for (int nb = 0; nb < L::NB; ++nb) HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) {
      const float x = r.s[nb][c];
      pr[nb][c] = x == neg_inf() ? 0.0f : fast_exp(x - mn[c / 2]);
      r.l[c / 2] += pr[nb][c];
    }
    HEADROOM_UNROLL
    for (int j = 0; j < L::J; ++j) HEADROOM_UNROLL
    for (int f = 0; f < 4; ++f) HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) r.o[j][f][c] *= alpha[c / 2];
    HEADROOM_UNROLL
    for (int kb = 0; kb < L::KB; ++kb) HEADROOM_UNROLL
    for (int h = 0; h < 2; ++h) {  // keys 16kb + 8h + 2q, + 1 of rows g (a0 / a2) and g + 8 (a1 / a3)
      r.pa[kb][2 * h] = pack2(from_float<T>(pr[2 * kb + h][0]), from_float<T>(pr[2 * kb + h][1]));
      r.pa[kb][2 * h + 1] = pack2(from_float<T>(pr[2 * kb + h][2]), from_float<T>(pr[2 * kb + h][3]));
    }
  });
}

// O += P V over step `step`'s keys, 16 at a time.
template <class T, int Dp, class Ctx, class SV, class Regs>
HEADROOM_HOST_DEVICE void tile_values(Ctx& ctx, const SV& st, Regs& rg, const tile_sweep& sw, int slot) {
  using L = tile_lane<Dp>;
  HEADROOM_UNROLL
  for (int j = 0; j < L::J; ++j) HEADROOM_UNROLL
  for (int kb = 0; kb < L::KB; ++kb) {
    tile_read_v<Dp>(ctx, st, rg, slot, j, kb, sw.idle_from);
    ctx.template transpose8x8<8>(rg.st, [](L& r) { return &r.kv[0][0]; });
    HEADROOM_UNROLL
    for (int f = 0; f < 4; ++f)
      ctx.template mma_m16n8k16<T>(rg.st, [&](L& r) {
        return mma_operands{
            {r.pa[kb][0], r.pa[kb][1], r.pa[kb][2], r.pa[kb][3]}, {r.kv[0][f], r.kv[1][f]}, r.o[j][f]};
      });
  }
}

// The sweep's steps, S = tile_stages: step k's key rows are read (into koff) S steps ahead, its
// copies issued S - 1 steps ahead, one commit group per step (empty past the last, so step k is
// always group k). The barrier of step k completes its stage for every warp, and ends every warp's
// reads of the stage and the koff slot that the step then refills.
template <class T, int Dp, class Ctx, class Sh, class QV, class Regs>
HEADROOM_HOST_DEVICE void tile_steps(Ctx& ctx, const paged_attention_inputs<T>& p, Sh& s, const tile_span& sp,
                                     const tile_sweep& sw, const QV& sq, Regs& rg) {
  constexpr int S = tile_stages;
  const auto st = ctx.template shared<attn_chunk>(s.kv, "tile_kv");
  const auto ko = ctx.template shared<1>(s.koff, "tile_koff");
  for (int k = 0; k < S && k < sw.steps; ++k) tile_rows_of<T, Dp>(ctx, p, ko, sp, sw, k, k);
  ctx.sync();  // koff (and q in shared memory) for every thread
  for (int k = 0; k < S - 1; ++k) {
    if (k < sw.steps) tile_issue<T, Dp>(ctx, p, st, ko, k);
    ctx.async_commit();
  }
  // slot = step % S, counted rather than divided; the step S - 1 ahead uses the slot before it.
  for (int64_t step = 0, slot = 0; step < sw.steps; ++step, slot = slot + 1 == S ? 0 : slot + 1) {
    const int sl = static_cast<int>(slot), ahead = sl == 0 ? S - 1 : sl - 1;
    ctx.template async_wait<S - 2>();
    ctx.sync();
    if (step + S - 1 < sw.steps) tile_issue<T, Dp>(ctx, p, st, ko, ahead);
    ctx.async_commit();
    if (step + S < sw.steps) tile_rows_of<T, Dp>(ctx, p, ko, sp, sw, step + S, sl);
    tile_scores<T, Dp>(ctx, p, st, sq, rg, sw, step, sl);
    tile_values<T, Dp>(ctx, st, rg, sw, sl);
  }
}

// Every valid row of the sweep, normalized, to element row dst_row(query, head) of dst (times D);
// with `with_lse` its natural-log log-sum-exp (-inf for a row that saw no key) to lse[that row].
template <class T, int Dp, class Ctx, class Regs, class DstRow>
HEADROOM_HOST_DEVICE void tile_store(Ctx& ctx, const paged_attention_inputs<T>& p, const tile_span& sp,
                                     const tile_sweep& sw, Regs& rg, buffer_ref<T> dst, buffer_ref<float> lse,
                                     bool with_lse, const DstRow& dst_row) {
  const auto out = ctx.global(dst);
  const auto ls = ctx.global(lse);
  const int64_t G = sp.group, D = p.head_size;
  ctx.threads([&](const thread_idx& t) { rg.red[t] = {{rg.st[t].l[0], rg.st[t].l[1]}}; });
  ctx.lane_sum(rg.red, 4);
  ctx.threads([&](const thread_idx& t) {
    const auto& r = rg.st[t];
    const int g = t.x / 4, q = t.x % 4;
    HEADROOM_UNROLL
    for (int i = 0; i < 2; ++i) {
      const int64_t row = sw.base + tile_rows * t.y + g + 8 * i;
      if (row > sw.last) continue;
      const int64_t e = dst_row(row / G, sp.kvh * G + row % G);
      const float L = rg.red[t][i], inv = L > 0.0f ? 1.0f / L : 0.0f;
      HEADROOM_UNROLL
      for (int j = 0; j < Dp / 32; ++j) {
        float acc[attn_chunk];
        HEADROOM_UNROLL
        for (int f = 0; f < 4; ++f) acc[2 * f] = r.o[j][f][2 * i], acc[2 * f + 1] = r.o[j][f][2 * i + 1];
        const int64_t d0 = 32 * j + 8 * q;
        store_chunk<attn_chunk>(out, e * D + d0, D - d0, D - d0 >= attn_chunk, acc, inv);
      }
      if (with_lse && q == 0) ls.store(e, L > 0.0f ? r.m[i] + log_f(L) : neg_inf());
    }
  });
}

// The pass over the span's rows, sweep by sweep; dst_row(query, head) names each row's element row.
template <class T, int Dp, class Ctx, class Sh, class DstRow>
HEADROOM_HOST_DEVICE void attend_tile(Ctx& ctx, const paged_attention_inputs<T>& p, Sh& s,
                                      const tile_span& sp, buffer_ref<T> dst, buffer_ref<float> lse,
                                      bool with_lse, const DstRow& dst_row) {
  constexpr int KT = tile_keys<Dp>;
  const int64_t rows = tile_rows * ctx.block_dim().y, G = sp.group, win = p.sliding_window;
  const auto sq = ctx.template shared<attn_chunk>(s.q, tile_q_in_regs<Dp> ? attn_chunk : rows * Dp, "tile_q");
  auto rg = make_tile_registers<Dp>(ctx);
  for (int64_t base = sp.rows_lo; base < sp.rows_hi; base += rows) {
    tile_sweep sw;
    sw.base = base;
    sw.last = (base + rows < sp.rows_hi ? base + rows : sp.rows_hi) - 1;
    // The keys some row sees: from the first row's window start to the last row's position.
    const int64_t first = win > 0 ? sp.shift + base / G - win + 1 : sp.lo, end = sp.shift + sw.last / G + 1;
    sw.klo = first > sp.lo ? first : sp.lo;
    sw.khi = end < sp.hi ? end : sp.hi;
    sw.steps = sw.khi > sw.klo ? (sw.khi - sw.klo + KT - 1) / KT : 0;
    sw.idle_from = (sw.last - base) / tile_rows + 1;
    if (base > sp.rows_lo) ctx.sync();  // the sweep before still reads koff, the stage and q
    tile_begin<T, Dp>(ctx, p, sp, sw, sq, rg);
    tile_steps<T, Dp>(ctx, p, s, sp, sw, sq, rg);
    tile_store<T, Dp>(ctx, p, sp, sw, rg, dst, lse, with_lse, dst_row);
  }
}

}  // namespace headroom
