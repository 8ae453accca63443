// attend_tile(): the prefill tile pass (FlashAttention-2 / FlashInfer's prefill), for bf16 / fp16
// at padded head sizes 64 to 256 with whole, aligned rows (mma_rows_aligned). A block of W warps
// takes its packed query rows in sweeps of 16 W (one sweep for tiles up to 128 rows); warp w owns
// rows 16w .. 16w + 15 of the sweep and keeps their whole online-softmax state in registers, and
// every warp walks the same steps of tile_keys keys, which the block stages once in shared memory
// (cp.async, tile_stages stages: a step's copies run while the steps before compute; one barrier
// per step). Both products are mma.m16n8k16, V's operands from ldmatrix.trans (layouts in
// attend_tile_lane.hpp). Steps cover only the keys some row of the sweep sees (causal end, window
// start); a step that lies inside the visible range of both of a lane's rows is not masked. No
// cross-warp combine: the normalized rows leave through the stage in 16-byte stores (tile_store).
#pragma once

#include "kernels/attend_tile_wg.hpp"

namespace headroom {

// S = Q K^T over the first NK keys of a step (all tile_keys, or half of them: the sweep's last
// keys), with the lanes' K operands from 16-byte shared loads.
template <class T, int Dp, int NK, class Ctx, class SV, class QV, class Regs>
HEADROOM_HOST_DEVICE void tile_products(Ctx& ctx, const SV& st, const QV& sq, Regs& rg, const tile_sweep& sw,
                                        int slot) {
  using L = tile_lane<Dp>;
  constexpr int NB = NK / 8;
  ctx.threads([&](const thread_idx& t) {
    HEADROOM_UNROLL
    for (int nb = 0; nb < NB; ++nb) HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) rg.st[t].s[nb][c] = 0.0f;
  });
  HEADROOM_UNROLL
  for (int j = 0; j < L::J; ++j) {
    tile_read_k<Dp, NB>(ctx, st, sq, rg, slot, j, sw.idle_from);
    const int qj = tile_q_in_regs<Dp> ? j : 0;
    HEADROOM_UNROLL
    for (int m = 0; m < 2; ++m) HEADROOM_UNROLL
    for (int nb = 0; nb < NB; ++nb)  // NB independent products between two on one accumulator
      ctx.template mma_m16n8k16<T>(rg.st, [&](L& r) {
        return mma_operands{
            {r.q[qj][0][2 * m], r.q[qj][1][2 * m], r.q[qj][0][2 * m + 1], r.q[qj][1][2 * m + 1]},
            {r.k[nb][2 * m], r.k[nb][2 * m + 1]},
            r.s[nb]};
      });
  }
}

// O += P V over the step's first NK keys: per 16 keys and 16 dims one ldmatrix.trans and two
// products.
template <class T, int Dp, int NK, class Ctx, class SV, class Regs>
HEADROOM_HOST_DEVICE void tile_values(Ctx& ctx, const SV& st, Regs& rg, int slot) {
  using L = tile_lane<Dp>;
  HEADROOM_UNROLL
  for (int kb = 0; kb < NK / 16; ++kb) HEADROOM_UNROLL
  for (int n = 0; n < Dp / 16; ++n) {
    tile_read_v<Dp>(ctx, st, rg, slot, kb, n);
    HEADROOM_UNROLL
    for (int h = 0; h < 2; ++h)
      ctx.template mma_m16n8k16<T>(rg.st, [&](L& r) {
        return mma_operands{{r.pa[kb][0], r.pa[kb][1], r.pa[kb][2], r.pa[kb][3]},
                            {r.v[2 * h], r.v[2 * h + 1]},
                            r.o[2 * n + h]};
      });
  }
}

// One step of NK keys from stage `slot`: scores, softmax, values (WG: the warpgroup pass's products).
template <class T, int Dp, bool WG, int NK, class Ctx, class SV, class QV, class Regs>
HEADROOM_HOST_DEVICE void tile_step(Ctx& ctx, const paged_attention_inputs<T>& p, const SV& st, const QV& sq,
                                    Regs& rg, const tile_sweep& sw, int64_t step, int slot) {
  if constexpr (WG) {
    tile_wg_products<T, Dp, NK>(ctx, st, rg, slot);
    tile_softmax<T, NK>(ctx, p, rg, step);
    tile_wg_values<T, Dp, NK>(ctx, st, rg, slot);
  } else {
    tile_products<T, Dp, NK>(ctx, st, sq, rg, sw, slot);
    tile_softmax<T, NK>(ctx, p, rg, step);
    tile_values<T, Dp, NK>(ctx, st, rg, slot);
  }
}

// The sweep's steps, S = tile_stages: step k's key rows are read (into koff) S steps ahead (WG: the
// first S steps' before the sweep's q: `first`, tile_rows_first), its copies issued S - 1 steps ahead, one
// commit group per step (empty past the last, so step k is always group k). The barrier of step k completes
// its stage for every warp, and ends every warp's reads of the stage and the koff slot that the step then
// refills. WG: the warpgroup pass, whose products read the stage through the async proxy (hence the fence
// before the barrier) and whose q, copied with step 0's stage (tile_wg_begin), reaches the registers after
// step 0's barrier.
template <class T, int Dp, bool WG, class Ctx, class Sh, class QV, class Regs, class First>
HEADROOM_HOST_DEVICE void tile_steps(Ctx& ctx, const paged_attention_inputs<T>& p, Sh& s, const tile_span& sp,
                                     const tile_sweep& sw, const QV& sq, Regs& rg, First& first) {
  constexpr int S = tile_stages, KT = tile_keys<Dp>;
  const auto st = ctx.template shared<attn_chunk>(s.kv, "tile_kv");
  const auto ko = ctx.template shared<1>(s.koff, "tile_koff");
  if constexpr (WG)
    tile_rows_put<Dp>(ctx, ko, sw, first);  // the first steps' key rows (tile_rows_first)
  else
    for (int k = 0; k < S && k < sw.steps; ++k) tile_rows_of<T, Dp>(ctx, p, ko, sp, sw, k, k);
  ctx.sync();  // koff (and q in shared memory) for every thread
  for (int k = 0; k < S - 1; ++k) {
    if (k < sw.steps) tile_issue<T, Dp, WG>(ctx, p, st, ko, k);
    ctx.async_commit();
  }
  // slot = step % S, counted rather than divided; the step S - 1 ahead uses the slot before it.
  for (int64_t step = 0, slot = 0; step < sw.steps; ++step, slot = slot + 1 == S ? 0 : slot + 1) {
    const int sl = static_cast<int>(slot), ahead = sl == 0 ? S - 1 : sl - 1;
    ctx.template async_wait<S - 2>();
    if constexpr (WG) ctx.fence_async_proxy();
    ctx.sync();
    if (step + S - 1 < sw.steps) tile_issue<T, Dp, WG>(ctx, p, st, ko, ahead);
    ctx.async_commit();
    if (step + S < sw.steps) tile_rows_of<T, Dp>(ctx, p, ko, sp, sw, step + S, sl);
    if constexpr (WG)
      if (step == 0) tile_wg_q<Dp>(ctx, sq, rg);  // q landed with the first stage
    if constexpr (KT >= 32) {
      if (step + 1 == sw.steps && sw.khi - sw.klo - step * KT <= KT / 2) {  // a short last step
        tile_step<T, Dp, WG, KT / 2>(ctx, p, st, sq, rg, sw, step, sl);
        continue;
      }
    }
    tile_step<T, Dp, WG, KT>(ctx, p, st, sq, rg, sw, step, sl);
  }
}

// Every valid row of the sweep, normalized, to element row dst_row(query, head) of dst (times Dp:
// the tile pass runs on whole rows, head_size == Dp); with `with_lse` its natural-log log-sum-exp
// (-inf for a row that saw no key) to lse[that row]. The rows go through the stage, free once every
// warp is past its last products: each lane puts its rounded pairs (pack2_rn) at their rows'
// places (swizzled as tile_row_at), then each thread stores 16-byte chunks of one row, so a row is
// one division and a warp's stores are whole 32-byte sectors.
template <class T, int Dp, class Ctx, class Sh, class Regs, class DstRow>
HEADROOM_HOST_DEVICE void tile_store(Ctx& ctx, Sh& s, const tile_span& sp, const tile_sweep& sw, Regs& rg,
                                     buffer_ref<T> dst, buffer_ref<float> lse, bool with_lse,
                                     const DstRow& dst_row) {
  constexpr int CPR = Dp / attn_chunk;  // chunks per row
  static_assert(int64_t{tile_max_warps<Dp>} * tile_rows * Dp <= sizeof(s.kv) / sizeof(T), "O fits the stage");
  const auto out = ctx.global(dst);
  const auto ls = ctx.global(lse);
  const auto so = ctx.template shared<2>(s.kv, "tile_o");  // pairs: four lanes share a chunk
  const int64_t G = sp.group;
  ctx.threads([&](const thread_idx& t) { rg.red[t] = {{rg.st[t].l[0], rg.st[t].l[1]}}; });
  ctx.lane_sum(rg.red, 4);
  ctx.sync();  // every warp's last products have read the stage
  ctx.threads([&](const thread_idx& t) {
    const auto& r = rg.st[t];
    const int g = t.x / 4, q = t.x % 4;
    HEADROOM_UNROLL
    for (int i = 0; i < 2; ++i) {
      const int32_t at = tile_rows * t.y + g + 8 * i;
      const float L = rg.red[t][i], inv = L > 0.0f ? 1.0f / L : 0.0f;
      HEADROOM_UNROLL
      for (int f = 0; f < Dp / 8; ++f)
        so.template store_vec_aligned<2>(
            tile_row_at<Dp>(at, f) + 2 * q,
            unpack2<T>(pack2_rn<T>(r.o[f][2 * i] * inv, r.o[f][2 * i + 1] * inv)));
      const int64_t row = sw.base + at;
      if (with_lse && q == 0 && row <= sw.last) {
        const tile_row_qh qh = tile_qh(sp, row);
        ls.store(dst_row(qh.q, sp.kvh * G + qh.h),
                 L > 0.0f ? r.m[i] * 0.6931471805599453f + log_f(L) : neg_inf());
      }
    }
  });
  ctx.sync();
  ctx.threads([&](const thread_idx& t) {  // thread 2a + h: row a, chunks 2k + h
    const int32_t at = static_cast<int32_t>(t.linear / 2);
    const int64_t row = sw.base + at;
    if (row > sw.last) return;
    const tile_row_qh qh = tile_qh(sp, row);
    const int64_t e = dst_row(qh.q, sp.kvh * G + qh.h) * Dp;
    HEADROOM_UNROLL
    for (int k = 0; k < CPR / 2; ++k) {
      const int c = 2 * k + static_cast<int>(t.linear % 2);
      out.template store_vec_aligned<attn_chunk>(
          e + c * attn_chunk, so.template load_vec_aligned<attn_chunk>(tile_row_at<Dp>(at, c)));
    }
  });
}

// The sweeps of one pass (WG: the warpgroup pass, attend_tile_wg.hpp).
template <class T, int Dp, bool WG, class Ctx, class Sh, class DstRow>
HEADROOM_HOST_DEVICE void tile_sweeps(Ctx& ctx, const paged_attention_inputs<T>& p, Sh& s,
                                      const tile_span& sp, buffer_ref<T> dst, buffer_ref<float> lse,
                                      bool with_lse, const DstRow& dst_row) {
  constexpr int KT = tile_keys<Dp>;
  const int64_t rows = tile_rows * ctx.block_dim().y, win = p.sliding_window;
  const auto sq =
      ctx.template shared<attn_chunk>(s.q, tile_q_in_regs<Dp> && !WG ? attn_chunk : rows * Dp, "tile_q");
  auto first_rows = [&] {  // the mma pass reads its first steps' key rows in tile_steps (tile_rows_of)
    if constexpr (WG)
      return make_registers<tile_first_keys<Dp>>(ctx);
    else
      return std::nullptr_t{};
  }();
  auto rg = [&] {
    if constexpr (WG)
      return make_tile_wg_registers<Dp>(ctx);
    else
      return make_tile_registers<Dp>(ctx);
  }();
  for (int64_t base = sp.rows_lo; base < sp.rows_hi; base += rows) {
    tile_sweep sw;
    sw.base = base;
    sw.last = (base + rows < sp.rows_hi ? base + rows : sp.rows_hi) - 1;
    // The keys some row sees: from the first row's window start to the last row's position.
    const int64_t first = win > 0 ? sp.shift + tile_qh(sp, base).q - win + 1 : sp.lo,
                  end = sp.shift + tile_qh(sp, sw.last).q + 1;
    sw.klo = first > sp.lo ? first : sp.lo;
    sw.khi = end < sp.hi ? end : sp.hi;
    sw.steps = sw.khi > sw.klo ? (sw.khi - sw.klo + KT - 1) / KT : 0;
    sw.idle_from = static_cast<int>((sw.last - base) / tile_rows + 1);
    if (base > sp.rows_lo) ctx.sync();  // the sweep before still reads koff, the stage and q
    if constexpr (WG) {
      tile_rows_first<T, Dp>(ctx, p, sp, sw, first_rows);  // before q's copies: their latency overlaps
      tile_wg_begin<T, Dp>(ctx, p, sp, sw, sq, rg);
    } else {
      tile_begin<T, Dp>(ctx, p, sp, sw, sq, rg);
    }
    tile_steps<T, Dp, WG>(ctx, p, s, sp, sw, sq, rg, first_rows);
    tile_store<T, Dp>(ctx, s, sp, sw, rg, dst, lse, with_lse, dst_row);
  }
}

// The pass over the span's rows, sweep by sweep; dst_row(query, head) names each row's element row.
// WG: the warpgroup pass where the context has wgmma (tile_wg_body), else the mma pass.
template <class T, int Dp, bool WG, class Ctx, class Sh, class DstRow>
HEADROOM_HOST_DEVICE void attend_tile(Ctx& ctx, const paged_attention_inputs<T>& p, Sh& s,
                                      const tile_span& sp, buffer_ref<T> dst, buffer_ref<float> lse,
                                      bool with_lse, const DstRow& dst_row) {
  tile_sweeps<T, Dp, WG && tile_wg_fits<Dp> && Ctx::has_wgmma>(ctx, p, s, sp, dst, lse, with_lse, dst_row);
}

}  // namespace headroom
