// The attention pass on CUDA cores (fp32 inputs, and head sizes above 256): q rows into shared
// memory, the rounds of tiles (each in the three phases of attend_simt_phases.hpp), then every warp
// publishes (m, l, acc) and attn_combined() merges the warps for the stores.
#pragma once

#include <utility>

#include "kernels/attend_shared.hpp"
#include "kernels/attend_simt_phases.hpp"

namespace headroom {

// Registers attend_range_simt() keeps per thread: allocate once per block.
template <int Dp, class Ctx>
struct simt_registers {
  decltype(make_registers<attn_state>(std::declval<Ctx&>())) st;
  decltype(make_registers<fvec<attn_rows * attn_pair_keys>>(std::declval<Ctx&>())) sc;
  decltype(make_registers<fvec<1>>(std::declval<Ctx&>())) lsum;
};
template <int Dp, class Ctx>
HEADROOM_HOST_DEVICE simt_registers<Dp, Ctx> make_simt_registers(Ctx& ctx) {
  return {make_registers<attn_state>(ctx), make_registers<fvec<attn_rows * attn_pair_keys>>(ctx),
          make_registers<fvec<1>>(ctx)};
}

// The pass's query rows, scaled, into s.q (zeros for invalid rows and dims past the head size);
// returns the mask of valid rows.
template <class T, int Dp, class Ctx, class RowOf>
HEADROOM_HOST_DEVICE uint32_t attn_load_q(Ctx& ctx, const paged_attention_inputs<T>& p,
                                          attn_shared_simt<Dp>& s, const RowOf& row_of) {
  const auto qg = ctx.global(p.q);
  const auto qs = ctx.template shared<attn_chunk>(s.q, "q_rows");
  const int64_t D = p.head_size, n = ctx.block_dim().count();
  constexpr int chunks = Dp / attn_chunk;
  ctx.threads([&](const thread_idx& t) {
    for (int64_t item = t.linear; item < attn_rows * chunks; item += n) {
      const int64_t m = item / chunks, d0 = (item % chunks) * attn_chunk;
      const row_desc row = row_of(m);
      fvec<attn_chunk> x;
      for (int e = 0; e < attn_chunk; ++e) x[e] = 0.0f;
      if (row.valid && d0 < D) {
        const auto v = load_chunk<attn_chunk>(
            qg, token_offset(ctx, p.int32_offsets, row.token, p.num_heads, D, row.head, d0), D - d0,
            D - d0 >= attn_chunk);
        for (int e = 0; e < attn_chunk; ++e) x[e] = to_float(v[e]) * p.scale;
      }
      qs.template store_vec<attn_chunk>(m * Dp + d0, x);
    }
  });
  uint32_t mask = 0;
  for (int m = 0; m < attn_rows; ++m)
    if (row_of(m).valid) mask |= 1u << m;
  return mask;
}

// The pass: q rows into shared memory, the rounds of tiles, then every warp's (m, l) next to its
// accumulators for attn_combined(). Ends on a barrier; returns the mask of valid rows.
template <class T, int Dp, class Ctx, class RowOf, class Regs>
HEADROOM_HOST_DEVICE uint32_t attend_range_simt(Ctx& ctx, const paged_attention_inputs<T>& p,
                                                attn_shared_simt<Dp>& s, const RowOf& row_of, int64_t seq,
                                                int64_t kvh, int64_t lo, int64_t hi, Regs& rg) {
  constexpr int LD = attn_lane_dims<Dp>;
  const int64_t W = ctx.block_dim().y, win = p.sliding_window;
  const uint32_t rmask = attn_load_q<T, Dp>(ctx, p, s, row_of);
  const auto os = ctx.template shared<attn_out_granule<Dp>>(s.o, "warp_out");
  ctx.threads([&](const thread_idx& t) {
    auto& r = rg.st[t];
    const row_desc row = row_of(t.x / 4);
    r.m = neg_inf();
    r.l = 0.0f;
    r.vlo = win > 0 && row.pos - win + 1 > lo ? row.pos - win + 1 : lo;
    r.vhi = row.pos + 1 < hi ? row.pos + 1 : hi;
    if (!row.valid) r.vlo = r.vhi = lo;
    vec<float, LD> z;
    HEADROOM_UNROLL
    for (int e = 0; e < LD; ++e) z[e] = 0.0f;
    HEADROOM_UNROLL
    for (int m = 0; m < attn_rows; ++m) os.template store_vec<LD>((t.y * attn_rows + m) * Dp + t.x * LD, z);
  });
  ctx.sync();
  const int64_t tiles = hi > lo ? (hi - lo + attn_tile - 1) / attn_tile : 0;
  for (int64_t round = 0; round * W < tiles; ++round) {
    const int par = static_cast<int>(round % 2);
    attn_scores<T, Dp>(ctx, p, s, rg, rmask, seq, kvh, lo, hi, round, par);
    ctx.sync();
    attn_softmax<Dp>(ctx, s, rg, lo, hi, round);
    ctx.sync();
    attn_values<T, Dp>(ctx, p, s, rmask, lo, hi, round, par);
  }
  const auto mls = ctx.template shared<1>(s.ml, "warp_ml");
  ctx.threads([&](const thread_idx& t) { rg.lsum[t][0] = rg.st[t].l; });
  ctx.lane_sum(rg.lsum, 4);  // the row's four softmax lanes hold partial sums
  ctx.threads([&](const thread_idx& t) {
    if (t.x % 4 != 0) return;
    const int64_t i = (t.y * attn_rows + t.x / 4) * 2;
    mls.store(i, rg.st[t].m);
    mls.store(i + 1, rg.lsum[t][0]);
  });
  ctx.sync();
  return rmask;
}

}  // namespace headroom
