// attend_range(): the heart of every attention body. A pass of rows (block.y rows of `lanes`
// threads) runs the online softmax over keys [lo, hi) of one sequence and kv head, 16 keys a step:
//   stage   all threads copy K and V of the step's keys into shared memory (block table lookups)
//   sync
//   dots    each thread: partial q.k over its vec dims for every visible key of the step
//   lane_sum  the lanes of a row add their partials (a warp butterfly on a GPU)
//   update  each thread: new running max, rescale, accumulate p * v over its vec dims
//   sync    (the next step overwrites the tiles)
// Every lane of a row keeps identical m and l; acc holds the lane's own dimensions.
#pragma once

#include "kernels/attention_common.hpp"

namespace headroom {

template <class T, int Dp, class Ctx, class RowOf, class Regs>
HEADROOM_HOST_DEVICE void attend_init(Ctx& ctx, const paged_attention_inputs<T>& p,
                                      const RowOf& row_of, Regs& st) {
  constexpr int V = head_layout<Dp>::vec;
  const auto q = ctx.global(p.q);
  const int64_t D = p.head_size;
  const bool whole = D % V == 0;
  ctx.threads([&](const thread_idx& t) {
    auto& r = st[t];
    r.m = neg_inf();
    r.l = 0.0f;
    for (int k = 0; k < V; ++k) r.q[k] = r.acc[k] = 0.0f;
    const row_desc row = row_of(t);
    const int64_t d0 = static_cast<int64_t>(t.x) * V;
    if (!row.valid || d0 >= D) return;
    const auto x = load_chunk<V>(q, (row.token * p.num_heads + row.head) * D + d0, D - d0, whole);
    for (int k = 0; k < V; ++k) r.q[k] = to_float(x[k]) * p.scale;
  });
}

template <class T, int Dp, class Ctx>
HEADROOM_HOST_DEVICE void stage_tile(Ctx& ctx, const paged_attention_inputs<T>& p,
                                     kv_tile_storage<T, Dp>& s, int64_t seq, int64_t kvh,
                                     int64_t base, int64_t lo, int64_t hi) {
  constexpr int V = head_layout<Dp>::vec, lanes = head_layout<Dp>::lanes;
  const auto kc = ctx.global(p.k_cache);
  const auto vc = ctx.global(p.v_cache);
  const auto bt = ctx.global(p.block_table);
  const auto kt = ctx.template shared<V>(s.k, "k_tile");
  const auto vt = ctx.template shared<V>(s.v, "v_tile");
  const int64_t D = p.head_size, bs = p.block_size, n = ctx.block_dim().count();
  const bool whole = D % V == 0;
  ctx.threads([&](const thread_idx& t) {
    for (int64_t item = t.linear; item < kv_tile_keys * lanes; item += n) {
      const int64_t kk = item / lanes, d0 = (item % lanes) * V, key = base + kk;
      if (key < lo || key >= hi || d0 >= D) continue;
      const int64_t phys = bt.load(seq * p.max_blocks_per_seq + key / bs);
      const int64_t off = ((phys * bs + key % bs) * p.num_kv_heads + kvh) * D + d0;
      kt.template store_vec<V>(kk * Dp + d0, load_chunk<V>(kc, off, D - d0, whole));
      vt.template store_vec<V>(kk * Dp + d0, load_chunk<V>(vc, off, D - d0, whole));
    }
  });
}

template <class T, int Dp, class Ctx, class RowOf, class Regs>
HEADROOM_HOST_DEVICE void attend_range(Ctx& ctx, const paged_attention_inputs<T>& p,
                                       kv_tile_storage<T, Dp>& s, const RowOf& row_of,
                                       int64_t seq, int64_t kvh, int64_t lo, int64_t hi, Regs& st) {
  constexpr int V = head_layout<Dp>::vec, lanes = head_layout<Dp>::lanes;
  attend_init<T, Dp>(ctx, p, row_of, st);
  if (lo >= hi) return;  // no key in range: every row keeps m = -inf, l = 0
  const auto kt = ctx.template shared<V>(s.k, "k_tile");
  const auto vt = ctx.template shared<V>(s.v, "v_tile");
  auto sc = make_registers<fvec<kv_tile_keys>>(ctx);
  const int64_t D = p.head_size, W = p.sliding_window;
  for (int64_t base = lo - lo % kv_tile_keys; base < hi; base += kv_tile_keys) {
    stage_tile<T, Dp>(ctx, p, s, seq, kvh, base, lo, hi);
    ctx.sync();
    ctx.threads([&](const thread_idx& t) {
      const row_desc row = row_of(t);
      const int64_t d0 = static_cast<int64_t>(t.x) * V;
      const auto& r = st[t];
      for (int kk = 0; kk < kv_tile_keys; ++kk) {
        const int64_t key = base + kk;
        float dot = 0.0f;
        if (row.valid && d0 < D && key >= lo && key < hi && key_visible(row, key, W)) {
          const auto k = kt.template load_vec<V>(kk * Dp + d0);
          for (int e = 0; e < V; ++e) dot += r.q[e] * to_float(k[e]);
        }
        sc[t][kk] = dot;
      }
    });
    ctx.lane_sum(sc, lanes);
    ctx.threads([&](const thread_idx& t) {
      const row_desc row = row_of(t);
      if (!row.valid) return;
      auto& r = st[t];
      const int64_t d0 = static_cast<int64_t>(t.x) * V;
      float mt = neg_inf();
      for (int kk = 0; kk < kv_tile_keys; ++kk) {
        const int64_t key = base + kk;
        if (key >= lo && key < hi && key_visible(row, key, W)) mt = max_f(mt, sc[t][kk]);
      }
      if (mt == neg_inf()) return;  // no key of this step is visible from this row
      const float m_new = max_f(r.m, mt), alpha = fast_exp(r.m - m_new);
      r.l *= alpha;
      for (int e = 0; e < V; ++e) r.acc[e] *= alpha;
      for (int kk = 0; kk < kv_tile_keys; ++kk) {
        const int64_t key = base + kk;
        if (key < lo || key >= hi || !key_visible(row, key, W)) continue;
        const float pr = fast_exp(sc[t][kk] - m_new);
        r.l += pr;
        if (d0 >= D) continue;
        const auto v = vt.template load_vec<V>(kk * Dp + d0);
        for (int e = 0; e < V; ++e) r.acc[e] += pr * to_float(v[e]);
      }
      r.m = m_new;
    });
    ctx.sync();
  }
}

}  // namespace headroom
