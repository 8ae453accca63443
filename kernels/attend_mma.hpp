// attend_range() on tensor cores, for bf16 / fp16 inputs and padded head sizes up to 256: the same
// pass (up to attn_rows query rows sharing one kv head, keys [lo, hi) of one sequence, warp w taking
// tiles w, w + W, ... of attn_tile keys), with both products on mma.m16n8k16 and the online softmax
// in registers. Warps never wait for each other inside a pass (all exchange is within a warp), so a
// round has no barrier. A tile is walked in steps of 16 keys; for lane l, g = l / 4, q = l % 4:
//   loads   K and V rows of keys base + g and base + 8 + g, dims 32j + 8q .. 32j + 8q + 7 (16 bytes
//           per chunk, straight from the paged cache) into the lane's own slots of a shared-memory
//           stage of S steps (attn_shared_mma): asynchronous copies (cp.async) when every row is
//           whole and 16-byte aligned (mma_rows_aligned: the usual case), so copies are in flight
//           while a step computes (mma_steps) and no registers hold them; plain loads and stores
//           otherwise. q row g at the same dims is read once per pass.
//   scores  S^T (16 keys x 8 rows) = K (16 x Dp) * Q^T, accumulated over Dp / 16 products. The
//           16 dims of product (j, m) are a permutation of 32j + 8q + 4m + {0..3} (the same one on
//           both sides, so the dot products are exact sums of the same terms): lane l holds
//           S^T[key g and g + 8][rows 2q, 2q + 1].
//   softmax the lane's two rows: tile maximum over the 8 lanes of equal q (lane_max stride 4),
//           rescale, p = exp(s - m) packed to 16 bits and transposed (8x8) into the B operand.
//   values  O^T (Dp x 8 rows) += V^T (Dp x 16 keys) * P^T: each 16-byte V chunk holds four 8x8
//           tiles (dims 2f, 2f + 1 of lanes' 8-dim chunks), transposed in registers (movmatrix);
//           lane l accumulates rows 2q, 2q + 1 at dims 32j + 8(g / 2) + 2f + g % 2.
// A lane reads back only the chunks it copied, so the stage needs no barrier either. Then, after
// a barrier, every warp publishes (m, l, O) over the stage exactly as the CUDA-core pass does, and
// attn_combined() merges the warps.
#pragma once

#include "kernels/attend_mma_lane.hpp"

namespace headroom {

// Every warp reads the q rows into its lanes' fragments (a few KiB, from L2 after the first warp),
// so no warp waits on a barrier before its first K loads.
template <class T, int Dp, class Ctx, class RowOf, class Regs>
HEADROOM_HOST_DEVICE uint32_t mma_begin(Ctx& ctx, const paged_attention_inputs<T>& p, const RowOf& row_of,
                                        int64_t lo, int64_t hi, Regs& rg) {
  const auto qg = ctx.global(p.q);
  const int64_t D = p.head_size, win = p.sliding_window;
  ctx.threads([&](const thread_idx& t) {
    auto& r = rg.st[t];
    const int g = t.x / 4, q = t.x % 4;
    const row_desc row = row_of(g);
    const int64_t q_off = token_offset(ctx, p.int32_offsets, row.token, p.num_heads, D, row.head);
    mma_load_q<T, Dp>(qg, row.valid ? q_off : -1, D, q, r.q);
    HEADROOM_UNROLL
    for (int i = 0; i < 2; ++i) {
      const row_desc ri = row_of(2 * q + i);
      r.m[i] = neg_inf();
      r.l[i] = 0.0f;
      r.vlo[i] = win > 0 && ri.pos - win + 1 > lo ? ri.pos - win + 1 : lo;
      r.vhi[i] = ri.pos + 1 < hi ? ri.pos + 1 : hi;
      if (!ri.valid) r.vlo[i] = r.vhi[i] = lo;
    }
    HEADROOM_UNROLL
    for (int j = 0; j < Dp / 32; ++j) HEADROOM_UNROLL
    for (int u = 0; u < 2; ++u) HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) r.o[j][u][c] = 0.0f;
  });
  uint32_t mask = 0;
  for (int m = 0; m < attn_rows; ++m)
    if (row_of(m).valid) mask |= 1u << m;
  return mask;
}

// The online softmax of the lane's two rows over the 16 keys at `base`; leaves P^T packed in pt.
template <class T, int Dp, class Ctx, class Regs>
HEADROOM_HOST_DEVICE void mma_softmax(Ctx& ctx, const paged_attention_inputs<T>& p, Regs& rg, int64_t lo,
                                      int64_t step) {
  const int64_t W = ctx.block_dim().y;
  const auto base_of = [&](const thread_idx& t) { return mma_step_base(lo, W, t.y, step); };
  // s[c]: key g + 8 (c / 2), row i = c % 2. Invisible keys score -inf.
  const auto score = [&](const mma_lane<Dp>& r, const thread_idx& t, int c) {
    const int64_t key = base_of(t) + t.x / 4 + 8 * (c / 2);
    const int i = c % 2;
    return key >= r.vlo[i] && key < r.vhi[i] ? r.s[c] * p.scale : neg_inf();
  };
  ctx.threads([&](const thread_idx& t) {
    const auto& r = rg.st[t];
    auto& x = rg.red[t];
    HEADROOM_UNROLL
    for (int i = 0; i < 2; ++i) x[i] = max_f(score(r, t, i), score(r, t, i + 2));
  });
  ctx.lane_max(rg.red, 8, 4);  // the 8 lanes of equal q hold the same two rows
  ctx.threads([&](const thread_idx& t) {
    auto& r = rg.st[t];
    float pr[4], alpha[2], mn[2];
    HEADROOM_UNROLL
    for (int i = 0; i < 2; ++i) {
      mn[i] = max_f(r.m[i], rg.red[t][i]);
      alpha[i] = mn[i] == neg_inf() ? 1.0f : fast_exp(r.m[i] - mn[i]);
    }
    HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) {
      const float x = score(r, t, c);
      pr[c] = x == neg_inf() ? 0.0f : fast_exp(x - mn[c % 2]);
    }
    HEADROOM_UNROLL
    for (int i = 0; i < 2; ++i) {
      r.l[i] = r.l[i] * alpha[i] + pr[i] + pr[i + 2];
      r.m[i] = mn[i];
    }
    HEADROOM_UNROLL
    for (int j = 0; j < Dp / 32; ++j) HEADROOM_UNROLL
    for (int u = 0; u < 2; ++u) HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) r.o[j][u][c] *= alpha[c % 2];
    r.pt[0] = pack2(from_float<T>(pr[0]), from_float<T>(pr[1]));  // P^T[key g][rows 2q, 2q + 1]
    r.pt[1] = pack2(from_float<T>(pr[2]), from_float<T>(pr[3]));  // key g + 8
  });
}

// The pass's steps: scores (K block by block from the stage), softmax, values (V block by block).
// One stage (S = 1): K and V are separate copy groups, so the next step's K copies run during
// this step's softmax and values, and its V copies during its own scores (measured on the H200:
// Triton-style +2.5% at 1x32768 and +4.5% at 16x4096, the rest within 1%: docs/bench.md run 29).
// More stages: the first S - 1 steps are issued ahead, one group per step (empty past the last
// step, so step k is always group k); each step issues step + S - 1 (and reads the block table for
// the one after), then waits for its own group.
template <class T, int Dp, int S, bool Aligned, class Ctx, class Regs, class SV>
HEADROOM_HOST_DEVICE void mma_steps(Ctx& ctx, const paged_attention_inputs<T>& p, Regs& rg, const SV& st,
                                    int64_t seq, int64_t kvh, int64_t lo, int64_t hi, int64_t steps) {
  constexpr int J = Dp / 32;
  const auto scores = [&](int64_t step) {
    ctx.threads([&](const thread_idx& t) {
      HEADROOM_UNROLL
      for (int c = 0; c < 4; ++c) rg.st[t].s[c] = 0.0f;
    });
    HEADROOM_UNROLL
    for (int j = 0; j < J; ++j) {
      mma_read<Dp, S>(ctx, st, rg, step, 0, j);
      HEADROOM_UNROLL
      for (int m = 0; m < 2; ++m)
        ctx.template mma_m16n8k16<T>(rg.st, [&](mma_lane<Dp>& r) {
          return mma_operands{{r.kv[0][2 * m], r.kv[1][2 * m], r.kv[0][2 * m + 1], r.kv[1][2 * m + 1]},
                              {r.q[j][2 * m], r.q[j][2 * m + 1]},
                              r.s};
        });
    }
  };
  const auto values = [&](int64_t step) {
    HEADROOM_UNROLL
    for (int j = 0; j < J; ++j) {
      mma_read<Dp, S>(ctx, st, rg, step, 1, j);
      ctx.template transpose8x8<8>(rg.st, [](mma_lane<Dp>& r) { return &r.kv[0][0]; });
      HEADROOM_UNROLL
      for (int u = 0; u < 2; ++u)
        ctx.template mma_m16n8k16<T>(rg.st, [&](mma_lane<Dp>& r) {
          return mma_operands{{r.kv[0][2 * u], r.kv[0][2 * u + 1], r.kv[1][2 * u], r.kv[1][2 * u + 1]},
                              {r.pt[0], r.pt[1]},
                              r.o[j][u]};
        });
    }
  };
  const auto softmax = [&](int64_t step) {
    mma_softmax<T, Dp>(ctx, p, rg, lo, step);
    ctx.template transpose8x8<2>(rg.st, [](mma_lane<Dp>& r) { return &r.pt[0]; });
  };
  if (steps > 0) mma_rows<T, Aligned>(ctx, p, rg, seq, kvh, lo, hi, 0);
  if constexpr (S == 1) {
    // Groups in order K0 V0 K1 V1 ...: before step k's scores the newest group is V(k), before its
    // values K(k + 1); waiting for all but the newest one completes the group needed. The block
    // table for step k + 2 is read after step k + 1's V is issued, a step ahead of its use.
    // Iteration -1 only issues step 0 (one call site per copy kind: the checked build's copies are
    // heavy to compile).
    for (int64_t step = -1; step < steps; ++step) {
      if (step >= 0) {
        ctx.template async_wait<1>();
        scores(step);
      }
      if (step + 1 < steps) mma_issue<T, Dp, S, Aligned, 0>(ctx, p, st, rg, step + 1);
      ctx.async_commit();
      if (step >= 0) {
        softmax(step);
        ctx.template async_wait<1>();
        values(step);
      }
      if (step + 1 < steps) mma_issue<T, Dp, S, Aligned, 1>(ctx, p, st, rg, step + 1);
      if (step + 2 < steps) mma_rows<T, Aligned>(ctx, p, rg, seq, kvh, lo, hi, step + 2);
      ctx.async_commit();
    }
    return;
  }
  const auto issue = [&](int64_t k) {  // step k's copies, then step k + 1's rows
    if (k >= steps) return;
    mma_issue<T, Dp, S, Aligned>(ctx, p, st, rg, k);
    if (k + 1 < steps) mma_rows<T, Aligned>(ctx, p, rg, seq, kvh, lo, hi, k + 1);
  };
  for (int64_t k = 0; k < S - 1; ++k) {
    issue(k);
    ctx.async_commit();
  }
  for (int64_t step = 0; step < steps; ++step) {
    issue(step + S - 1);
    ctx.async_commit();
    ctx.template async_wait<S - 1>();
    scores(step);
    softmax(step);
    values(step);
  }
}

// Every warp's (m, l) and accumulators into attn_shared for attn_combined(). The accumulators
// replace the stage, so every warp must be done with it first: a barrier before, and one after.
template <int Dp, class Ctx, class Sh, class Regs>
HEADROOM_HOST_DEVICE void mma_publish(Ctx& ctx, Sh& s, Regs& rg) {
  const int64_t W = ctx.block_dim().y;
  const auto os =
      ctx.template shared<1>(s.o, W * attn_rows * Dp, "warp_out");  // lanes g, g ^ 1 share 8-float chunks
  const auto mls = ctx.template shared<1>(s.ml, W * attn_rows * 2, "warp_ml");
  ctx.sync();
  ctx.threads([&](const thread_idx& t) { rg.red[t] = {{rg.st[t].l[0], rg.st[t].l[1]}}; });
  ctx.lane_sum(rg.red, 8, 4);
  ctx.threads([&](const thread_idx& t) {
    const auto& r = rg.st[t];
    const int g = t.x / 4, q = t.x % 4;
    HEADROOM_UNROLL
    for (int i = 0; i < 2; ++i) {
      const int64_t row = (static_cast<int64_t>(t.y) * attn_rows + 2 * q + i) * Dp;
      HEADROOM_UNROLL
      for (int j = 0; j < Dp / 32; ++j) HEADROOM_UNROLL
      for (int u = 0; u < 2; ++u) {
        const int64_t d = 32 * j + 8 * (g / 2) + 4 * u + g % 2;  // pair u: tiles f = 2u, 2u + 1
        os.store(row + d, r.o[j][u][i]);
        os.store(row + d + 2, r.o[j][u][i + 2]);
      }
      if (g == 0) {
        mls.store((t.y * attn_rows + 2 * q + i) * 2, r.m[i]);
        mls.store((t.y * attn_rows + 2 * q + i) * 2 + 1, rg.red[t][i]);
      }
    }
  });
  ctx.sync();
}

template <class T, int Dp, class Ctx, class Sh, class RowOf, class Regs>
HEADROOM_HOST_DEVICE uint32_t attend_range_mma(Ctx& ctx, const paged_attention_inputs<T>& p, Sh& s,
                                               const RowOf& row_of, int64_t seq, int64_t kvh, int64_t lo,
                                               int64_t hi, Regs& rg) {
  const uint32_t rmask = mma_begin<T, Dp>(ctx, p, row_of, lo, hi, rg);
  const int64_t W = ctx.block_dim().y;
  const int64_t tiles = hi > lo ? (hi - lo + attn_tile - 1) / attn_tile : 0;
  const int64_t steps = (tiles + W - 1) / W * (attn_tile / mma_keys);
  constexpr int S = Sh::stages;
  const auto st = ctx.template shared<attn_chunk>(s.stage, W * Sh::warp_stage, "kv_stage");
  if (mma_rows_aligned<Dp>(p))
    mma_steps<T, Dp, S, true>(ctx, p, rg, st, seq, kvh, lo, hi, steps);
  else
    mma_steps<T, Dp, S, false>(ctx, p, rg, st, seq, kvh, lo, hi, steps);
  mma_publish<Dp>(ctx, s, rg);
  return rmask;
}

}  // namespace headroom
