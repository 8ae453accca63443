// The three phases of a CUDA-core attention tile (attend_simt.hpp runs them). A pass of up to
// attn_rows query rows that share one kv head runs the online softmax over keys [lo, hi) of one
// sequence. The block is W warps ({32, W} threads); warp w takes tiles w, w + W, ... of attn_tile
// keys, each tile in three phases:
//   scores  lane pair p owns keys 4p..4p+3, each lane every other 8-element chunk of them, read
//           straight from the paged cache (a pair reads 32 contiguous bytes); q comes from shared
//           memory (fp32, broadcast); lane_sum(2) completes the dot products -> s[w][row][key]
//   softmax lane (row h = lane/4, quarter o): the tile's max over the row's visible keys, the
//           rescale factor alpha and p = exp(s - m) for keys 16o..16o+15 -> p[w][row][key]
//   values  lane l owns dims l*Dp/32.. of every row: acc = acc * alpha + sum_k p[row][k] * v[k]
// All arithmetic is fp32 on CUDA cores; every index into a register array is a compile-time
// constant after unrolling (HEADROOM_UNROLL), so the state stays in registers on a GPU.
#pragma once

#include "kernels/attend_shared.hpp"

namespace headroom {

// Per-thread state across the rounds: the softmax phase's row (lane / 4) and the keys of the pass
// it sees. The values phase keeps its accumulators in shared memory (attn_shared::o) between
// rounds, which leaves the scores phase the whole register file.
struct attn_state {
  float m, l;        // running maximum, this lane's partial sum of exp(s - m)
  int64_t vlo, vhi;  // keys [vlo, vhi) of [lo, hi) visible from the row (empty: invalid row)
};

// Scores of warp w's tile at `base` into s[w][key][row] (and the keys' row offsets into
// koff[par][w]). The chunk loop is unrolled with the next chunk's K loads issued before the current
// chunk's arithmetic (double buffering), so a lane keeps two chunks of its four keys in flight.
template <class T, int Dp, class Ctx, class Regs>
HEADROOM_HOST_DEVICE void attn_scores(Ctx& ctx, const paged_attention_inputs<T>& p, attn_shared_simt<Dp>& s,
                                      Regs& rg, uint32_t rmask, int64_t seq, int64_t kvh, int64_t lo,
                                      int64_t hi, int64_t round, int par) {
  constexpr int PK = attn_pair_keys, chunks = Dp / (2 * attn_chunk);
  const auto kc = ctx.global(p.k_cache);
  const auto bt = ctx.global(p.block_table);
  const auto qs = ctx.template shared<attn_chunk>(s.q, "q_rows");
  const auto ss = ctx.template shared<1>(s.s, "scores");
  const auto ko = ctx.template shared<1>(s.koff, "key_offsets");
  const int64_t D = p.head_size, W = ctx.block_dim().y;
  ctx.threads([&](const thread_idx& t) {
    auto& acc = rg.sc[t];
    HEADROOM_UNROLL
    for (int k = 0; k < attn_rows * PK; ++k) acc[k] = 0.0f;
    const int64_t base = lo + (round * W + t.y) * attn_tile;
    if (base >= hi) return;
    const int pair = t.x / 2, half = t.x % 2;
    int64_t off[PK];
    HEADROOM_UNROLL
    for (int j = 0; j < PK; ++j) {
      const int64_t key = base + pair * PK + j;
      off[j] = -1;
      if (key < hi) off[j] = kv_key_row(p, bt, seq, key, kvh);
      if (half == 0) ko.store((par * W + t.y) * attn_tile + pair * PK + j, off[j]);
    }
    vec<T, attn_chunk> kr[2][PK];
    const auto fetch = [&](int c, vec<T, attn_chunk>(&dst)[PK]) {
      const int64_t d0 = (2 * c + half) * attn_chunk;
      HEADROOM_UNROLL
      for (int j = 0; j < PK; ++j) {
        if (off[j] >= 0 && d0 < D)
          dst[j] = load_chunk<attn_chunk>(kc, off[j] + d0, D - d0, D - d0 >= attn_chunk);
        else
          for (int e = 0; e < attn_chunk; ++e) dst[j][e] = from_float<T>(0.0f);
      }
    };
    const auto compute = [&](int c, const vec<T, attn_chunk>(&src)[PK]) {
      const int64_t d0 = (2 * c + half) * attn_chunk;
      if (d0 >= D) return;
      float kf[PK][attn_chunk];
      HEADROOM_UNROLL
      for (int j = 0; j < PK; ++j) HEADROOM_UNROLL
      for (int e = 0; e < attn_chunk; ++e) kf[j][e] = to_float(src[j][e]);
      HEADROOM_UNROLL
      for (int m = 0; m < attn_rows; ++m) {
        if (!(rmask >> m & 1u)) continue;
        const auto qv = qs.template load_vec<attn_chunk>(m * Dp + d0);
        HEADROOM_UNROLL
        for (int j = 0; j < PK; ++j) HEADROOM_UNROLL
        for (int e = 0; e < attn_chunk; ++e) acc[m * PK + j] += qv[e] * kf[j][e];
      }
    };
    static_assert(chunks % 2 == 0, "chunks go in pairs");
    fetch(0, kr[0]);
    HEADROOM_NO_UNROLL
    for (int c = 0; c < chunks; c += 2) {  // a rolled loop: nvcc cannot hoist every load of the tile
      fetch(c + 1, kr[1]);
      compute(c, kr[0]);
      if (c + 2 < chunks) fetch(c + 2, kr[0]);
      compute(c + 1, kr[1]);
    }
  });
  ctx.lane_sum(rg.sc, 2);
  ctx.threads([&](const thread_idx& t) {
    const int64_t base = lo + (round * W + t.y) * attn_tile;
    if (base >= hi) return;
    const int pair = t.x / 2, half = t.x % 2;
    const auto& acc = rg.sc[t];
    HEADROOM_UNROLL
    for (int j = 0; j < PK; ++j) {  // lane half h writes rows 4h..4h+3 of its pair's keys
      fvec<4> x;
      HEADROOM_UNROLL
      for (int mm = 0; mm < 4; ++mm) x[mm] = half ? acc[(4 + mm) * PK + j] : acc[mm * PK + j];
      ss.template store_vec<4>((t.y * attn_tile + pair * PK + j) * attn_kstride + 4 * half, x);
    }
  });
}

// Softmax phase: lane (row h = lane / 4, o = lane % 4) takes the tile's maximum over the row's
// visible keys, then p = exp(s - m) for keys 4i + o (interleaved: the 32 lanes' stores hit 32 banks).
template <int Dp, class Ctx, class Regs>
HEADROOM_HOST_DEVICE void attn_softmax(Ctx& ctx, attn_shared_simt<Dp>& s, Regs& rg, int64_t lo, int64_t hi,
                                       int64_t round) {
  const auto ss = ctx.template shared<1>(s.s, "scores");
  const auto ps = ctx.template shared<1>(s.p, "probs");
  const auto as = ctx.template shared<1>(s.alpha, "alpha");
  const int64_t W = ctx.block_dim().y;
  ctx.threads([&](const thread_idx& t) {
    const int64_t base = lo + (round * W + t.y) * attn_tile;
    if (base >= hi) return;
    const int h = t.x / 4, o = t.x % 4;
    auto& r = rg.st[t];
    const int64_t srow = t.y * attn_tile * attn_kstride + h;
    float mt = neg_inf();
    const int64_t klo = r.vlo > base ? r.vlo - base : 0;
    const int64_t khi = r.vhi < base + attn_tile ? r.vhi - base : attn_tile;
    for (int64_t k = klo; k < khi; ++k) mt = max_f(mt, ss.load(srow + k * attn_kstride));
    const float mn = max_f(r.m, mt);
    const float alpha = mn == neg_inf() ? 1.0f : fast_exp(r.m - mn);
    float sum = 0.0f;
    HEADROOM_UNROLL
    for (int i = 0; i < attn_tile / 4; ++i) {
      const int64_t k = 4 * i + o;
      float pr = 0.0f;
      if (k >= klo && k < khi) pr = fast_exp(ss.load(srow + k * attn_kstride) - mn);
      sum += pr;
      ps.store(srow + k * attn_kstride, pr);
    }
    r.l = r.l * alpha + sum;
    r.m = mn;
    if (o == 0) as.store(t.y * attn_rows + h, alpha);
  });
}

// Values phase: acc[row][lane's dims] = acc * alpha[row] + sum over the tile's keys of p * v, the
// accumulators loaded from and stored back to the lane's own slots of attn_shared::o. Keys go in
// batches of attn_vbatch, the next batch's V loads issued before the current batch's arithmetic.
template <class T, int Dp, class Ctx>
HEADROOM_HOST_DEVICE void attn_values(Ctx& ctx, const paged_attention_inputs<T>& p, attn_shared_simt<Dp>& s,
                                      uint32_t rmask, int64_t lo, int64_t hi, int64_t round, int par) {
  constexpr int LD = attn_lane_dims<Dp>, B = attn_vbatch, batches = attn_tile / attn_vbatch;
  const auto vc = ctx.global(p.v_cache);
  const auto ps = ctx.template shared<1>(s.p, "probs");
  const auto as = ctx.template shared<1>(s.alpha, "alpha");
  const auto ko = ctx.template shared<1>(s.koff, "key_offsets");
  const auto os = ctx.template shared<attn_out_granule<Dp>>(s.o, "warp_out");
  const int64_t D = p.head_size, W = ctx.block_dim().y;
  ctx.threads([&](const thread_idx& t) {
    const int64_t base = lo + (round * W + t.y) * attn_tile;
    if (base >= hi) return;
    const auto a0 = as.template load_vec<4>(t.y * attn_rows),
               a1 = as.template load_vec<4>(t.y * attn_rows + 4);
    const float a[attn_rows] = {a0[0], a0[1], a0[2], a0[3], a1[0], a1[1], a1[2], a1[3]};
    float acc[attn_rows][LD];
    HEADROOM_UNROLL
    for (int m = 0; m < attn_rows; ++m) {
      const auto x = os.template load_vec<LD>((t.y * attn_rows + m) * Dp + t.x * LD);
      HEADROOM_UNROLL
      for (int e = 0; e < LD; ++e) acc[m][e] = x[e] * a[m];
    }
    const int64_t d0 = static_cast<int64_t>(t.x) * LD;
    const int64_t nk = d0 >= D ? 0 : (hi - base < attn_tile ? hi - base : attn_tile);
    const int64_t kob = (par * W + t.y) * attn_tile, prow = t.y * attn_tile * attn_kstride;
    vec<T, LD> vr[2][B];
    const auto fetch = [&](int bi, vec<T, LD>(&dst)[B]) {
      HEADROOM_UNROLL
      for (int j = 0; j < B; ++j) {
        const int64_t k = bi * B + j;
        if (k < nk)
          dst[j] = load_chunk<LD>(vc, ko.load(kob + k) + d0, D - d0, D - d0 >= LD);
        else
          for (int e = 0; e < LD; ++e) dst[j][e] = from_float<T>(0.0f);
      }
    };
    const auto compute = [&](int bi, const vec<T, LD>(&src)[B]) {
      HEADROOM_UNROLL
      for (int j = 0; j < B; ++j) {
        const int64_t k = bi * B + j;
        if (k >= nk) break;
        const auto p0 = ps.template load_vec<4>(prow + k * attn_kstride);
        const auto p1 = ps.template load_vec<4>(prow + k * attn_kstride + 4);
        const float pr[attn_rows] = {p0[0], p0[1], p0[2], p0[3], p1[0], p1[1], p1[2], p1[3]};
        float vf[LD];
        HEADROOM_UNROLL
        for (int e = 0; e < LD; ++e) vf[e] = to_float(src[j][e]);
        HEADROOM_UNROLL
        for (int m = 0; m < attn_rows; ++m) {
          if (!(rmask >> m & 1u)) continue;
          HEADROOM_UNROLL
          for (int e = 0; e < LD; ++e) acc[m][e] += pr[m] * vf[e];
        }
      }
    };
    static_assert(batches % 2 == 0, "value batches go in pairs");
    fetch(0, vr[0]);
    HEADROOM_NO_UNROLL
    for (int bi = 0; bi < batches && bi * B < nk; bi += 2) {
      fetch(bi + 1, vr[1]);
      compute(bi, vr[0]);
      if (bi + 2 < batches) fetch(bi + 2, vr[0]);
      compute(bi + 1, vr[1]);
    }
    HEADROOM_UNROLL
    for (int m = 0; m < attn_rows; ++m) {
      vec<float, LD> x;
      HEADROOM_UNROLL
      for (int e = 0; e < LD; ++e) x[e] = acc[m][e];
      os.template store_vec<LD>((t.y * attn_rows + m) * Dp + t.x * LD, x);
    }
  });
}

}  // namespace headroom
