// The loads of the prefill tile pass (attend_tile.hpp) that fill its registers and its shared
// stage: a sweep's rows (visible keys, q), the block-table rows of a step's keys (one read per key,
// into shared memory a step ahead of their use), and a step's K and V chunks (asynchronous copies
// spread over the whole block).
#pragma once

#include "kernels/attend_tile_lane.hpp"
#include "kernels/fastdiv.hpp"

namespace headroom {

// The packed rows of one work item (fi_batch_prefill): packed row r is query r / group, head
// kvh * group + r % group, position shift + r / group; keys [lo, hi) of request seq.
struct tile_span {
  int64_t seq = 0, qo_start = 0, shift = 0, group = 1, kvh = 0;
  int64_t rows_lo = 0, rows_hi = 0, lo = 0, hi = 0;
  fastdiv32 gdiv;  // divides by `group` where every row the pass computes fits 31 bits; else unusable
};

// Packed row `row` of the span as its query (row / group) and its head within the kv head's group
// (row % group): by the span's fastdiv32 where it has one, else by division.
struct tile_row_qh {
  int64_t q, h;
};
HEADROOM_HOST_DEVICE inline tile_row_qh tile_qh(const tile_span& sp, int64_t row) {
  if (sp.gdiv.usable()) {
    const auto r = static_cast<uint32_t>(row), q = sp.gdiv.div(r);
    return {q, r - q * sp.gdiv.d};
  }
  return {row / sp.group, row % sp.group};
}

// One sweep's rows and keys: rows [base, last], keys [klo, khi) in `steps` steps.
struct tile_sweep {
  int64_t base = 0, last = 0, klo = 0, khi = 0, steps = 0;
  int idle_from = 0;  // the first warp with no valid row
};

// The 16-byte chunk at off + d0 of q (whole, aligned rows), zeros for off -1.
template <class T, class View>
HEADROOM_HOST_DEVICE vec<T, attn_chunk> tile_q_chunk(const View& v, int64_t off, int64_t d0) {
  if (off >= 0) return v.template load_vec_aligned<attn_chunk>(off + d0);
  return zero_chunk<T>();
}

// A lane's two rows at the start of a sweep: their visible keys (relative to klo; a row past the
// sweep, never stored, gets the sweep's and no mask of its own) and an empty softmax state.
template <class Lane, class T>
HEADROOM_HOST_DEVICE void tile_row_state(Lane& r, const paged_attention_inputs<T>& p, const tile_span& sp,
                                         const tile_sweep& sw, const thread_idx& t) {
  const int64_t win = p.sliding_window;
  HEADROOM_UNROLL
  for (int i = 0; i < 2; ++i) {
    const int64_t row = sw.base + tile_rows * t.y + t.x / 4 + 8 * i;
    const int64_t pos = sp.shift + tile_qh(sp, row).q;
    int64_t vlo = win > 0 && pos - win + 1 > sw.klo ? pos - win + 1 : sw.klo;
    int64_t vhi = pos + 1 < sw.khi ? pos + 1 : sw.khi;
    if (row > sw.last) vlo = sw.klo, vhi = sw.khi;
    r.vlo[i] = static_cast<int32_t>(vlo - sw.klo);
    r.vhi[i] = static_cast<int32_t>((vhi > vlo ? vhi : vlo) - sw.klo);
    r.m[i] = neg_inf();
    r.l[i] = 0.0f;
  }
}

// The lanes' rows (tile_row_state), q (registers or shared memory), zero accumulators.
template <class T, int Dp, class Ctx, class QV, class Regs>
HEADROOM_HOST_DEVICE void tile_begin(Ctx& ctx, const paged_attention_inputs<T>& p, const tile_span& sp,
                                     const tile_sweep& sw, const QV& sq, Regs& rg) {
  constexpr int CPR = Dp / attn_chunk;  // chunks per row
  const auto qg = ctx.global(p.q);
  const int64_t G = sp.group, D = p.head_size;
  const auto q_off = [&](int64_t row) {  // element offset of packed row `row`'s q, -1 past the sweep
    if (row > sw.last) return int64_t{-1};
    const tile_row_qh qh = tile_qh(sp, row);
    return token_offset(ctx, p.int32_offsets, sp.qo_start + qh.q, p.num_heads, D, sp.kvh * G + qh.h);
  };
  ctx.threads([&](const thread_idx& t) {
    auto& r = rg.st[t];
    const int g = t.x / 4, q = t.x % 4;
    tile_lane_offsets<Dp>(r, t.x);
    tile_row_state(r, p, sp, sw, t);
    if constexpr (tile_q_in_regs<Dp>) {
      HEADROOM_UNROLL
      for (int i = 0; i < 2; ++i) {
        const int64_t off = t.y < sw.idle_from ? q_off(sw.base + tile_rows * t.y + g + 8 * i) : -1;
        HEADROOM_UNROLL
        for (int j = 0; j < Dp / 32; ++j) pack8(tile_q_chunk<T>(qg, off, 32 * j + 8 * q), r.q[j][i]);
      }
    }
    HEADROOM_UNROLL
    for (int nb = 0; nb < tile_lane<Dp>::NB; ++nb) HEADROOM_UNROLL
    for (int e = 0; e < 4; ++e) r.k[nb][e] = 0u;  // an idle warp multiplies zeros, not stale bits
    HEADROOM_UNROLL
    for (int f = 0; f < tile_lane<Dp>::F; ++f) HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) r.o[f][c] = 0.0f;
  });
  if constexpr (!tile_q_in_regs<Dp>) {
    const int64_t n = ctx.block_dim().count(), rows = tile_rows * ctx.block_dim().y;
    ctx.threads([&](const thread_idx& t) {
      for (int64_t i = t.linear; i < rows * CPR; i += n) {
        const int64_t row = i / CPR;
        const int c = static_cast<int>(i % CPR);
        sq.template store_vec<attn_chunk>(tile_row_at<Dp>(row, c),
                                          tile_q_chunk<T>(qg, q_off(sw.base + row), c * attn_chunk));
      }
    });
  }
}

// The row offset of the sweep's key klo + k (past khi: the last key again, its probability 0): one
// block-table read.
template <class T, class View>
HEADROOM_HOST_DEVICE int64_t tile_key_row(const paged_attention_inputs<T>& p, const View& bt,
                                          const tile_span& sp, const tile_sweep& sw, int64_t k) {
  return kv_key_row(p, bt, sp.seq, sw.klo + k < sw.khi ? sw.klo + k : sw.khi - 1, sp.kvh);
}

// The row offsets of step `step`'s keys into its koff slot (step % tile_stages): one block-table
// read per key.
template <class T, int Dp, class Ctx, class KO>
HEADROOM_HOST_DEVICE void tile_rows_of(Ctx& ctx, const paged_attention_inputs<T>& p, const KO& ko,
                                       const tile_span& sp, const tile_sweep& sw, int64_t step, int slot) {
  constexpr int KT = tile_keys<Dp>;
  const auto bt = ctx.global(p.block_table);
  const int64_t n = ctx.block_dim().count();
  ctx.threads([&](const thread_idx& t) {
    for (int k = t.linear; k < KT; k += n)
      ko.store(slot * KT + k, tile_key_row(p, bt, sp, sw, step * KT + k));
  });
}

// The warpgroup pass's key rows of a sweep's first tile_stages steps, read into registers before
// the sweep's q is issued (tile_rows_first) so that the block-table reads' latency passes under
// that work, and stored to their koff slots (tile_rows_put) just before the first barrier. Up to
// tile_first_rows<Dp> keys a thread: the first steps' keys over a block of one warpgroup at least.
// (The mma pass reads them after its q, tile_rows_of: its q registers leave no room for these.)
template <int Dp>
inline constexpr int tile_first_rows = (tile_stages * tile_keys<Dp> + 127) / 128;
template <int Dp>
struct tile_first_keys {
  int64_t off[tile_first_rows<Dp>];
};
// The keys of those steps: tile_stages steps' or, in a shorter sweep, all of its steps'.
template <int Dp>
HEADROOM_HOST_DEVICE int64_t tile_first_count(const tile_sweep& sw) {
  return (sw.steps < tile_stages ? sw.steps : tile_stages) * tile_keys<Dp>;
}

template <class T, int Dp, class Ctx, class Regs>
HEADROOM_HOST_DEVICE void tile_rows_first(Ctx& ctx, const paged_attention_inputs<T>& p, const tile_span& sp,
                                          const tile_sweep& sw, Regs& fr) {
  const auto bt = ctx.global(p.block_table);
  const int64_t n = ctx.block_dim().count(), keys = tile_first_count<Dp>(sw);
  ctx.threads([&](const thread_idx& t) {
    HEADROOM_UNROLL
    for (int j = 0; j < tile_first_rows<Dp>; ++j) {
      const int64_t k = t.linear + j * n;
      if (k < keys) fr[t].off[j] = tile_key_row(p, bt, sp, sw, k);
    }
  });
}

template <int Dp, class Ctx, class KO, class Regs>
HEADROOM_HOST_DEVICE void tile_rows_put(Ctx& ctx, const KO& ko, const tile_sweep& sw, Regs& fr) {
  const int64_t n = ctx.block_dim().count(), keys = tile_first_count<Dp>(sw);
  ctx.threads([&](const thread_idx& t) {
    HEADROOM_UNROLL
    for (int j = 0; j < tile_first_rows<Dp>; ++j) {
      const int64_t k = t.linear + j * n;
      if (k < keys) ko.store(k, fr[t].off[j]);  // step k / KT's slot is k / KT: koff [slot][key]
    }
  });
}

// The K and V chunks of the step whose key rows are in koff slot `slot` into its stage, spread over
// the block's threads; WG: in the warpgroup pass's layout (tile_wg_kv_at).
template <class T, int Dp, bool WG, class Ctx, class SV, class KO>
HEADROOM_HOST_DEVICE void tile_issue(Ctx& ctx, const paged_attention_inputs<T>& p, const SV& st, const KO& ko,
                                     int slot) {
  constexpr int KT = tile_keys<Dp>, CPR = Dp / attn_chunk;
  const auto kc = ctx.global(p.k_cache);
  const auto vc = ctx.global(p.v_cache);
  const int n = static_cast<int>(ctx.block_dim().count());
  ctx.threads([&](const thread_idx& t) {
    for (int i = t.linear; i < KT * CPR; i += n) {  // a quarter warp: 8 chunks of one key
      const int key = i / CPR, c = i % CPR;
      const int64_t off = ko.load(slot * KT + key) + c * attn_chunk;
      const auto at = [&](int kv) {
        if constexpr (WG)
          return tile_wg_kv_at<Dp, KT>(slot, kv, key, c);
        else
          return tile_kv_at<Dp, KT>(slot, kv, key, c);
      };
      ctx.template copy_async<attn_chunk>(st, at(0), kc, off);
      ctx.template copy_async<attn_chunk>(st, at(1), vc, off);
    }
  });
}

}  // namespace headroom
