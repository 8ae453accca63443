// Triton unified attention (vLLM TRITON_ATTN, SPEC.md 4) as kernel bodies:
//   triton_attention<T, Dp, true>   the 3D segmented decode kernel: grid (T/BLOCK_Q + num_seqs, KV,
//                                   16); each active segment writes its unnormalised partial output,
//                                   max and exp-sum with the LAYER's strides:
//                                   segm_output[((t*H + h)*16 + s)*Dp_l + d], segm_max/expsum[(t*H + h)*16 + s]
//   triton_segment_reduce           grid (T, H): combines the active segments into the output
//   triton_attention<T, Dp, false>  the 2D kernel: grid (T/BLOCK_Q + num_seqs, KV), whole sequence,
//                                   writes the output directly and touches no buffer.
// Rows of a q-block: row m is query token local*BLOCK_Q + m/G of the request and head kvh*G + m%G.
#pragma once

#include "kernels/attend_range.hpp"

namespace headroom {

inline constexpr int64_t triton_num_segments = 16;  // NUM_SEGMENTS (= triton_segments)

template <class T>
struct triton_params {
  paged_attention_inputs<T> in;
  buffer_ref<T> output;             // [tokens][heads][head_size]: 2D path and reduce
  buffer_ref<float> segm_output;    // plan buffer, 3D path
  buffer_ref<float> segm_max;       // plan buffer, 3D path
  buffer_ref<float> segm_expsum;    // plan buffer, 3D path
  int64_t block_m = 16, block_q = 16;  // SPEC 4: BLOCK_M = 16 if G <= 16 else next_pow2(G)
  int64_t head_size_padded = 0;     // the layer's Dp: the stride of segm_output rows
  int64_t rows_per_pass = 1;        // block.y: rows handled at once (host: <= 256 / lanes)
};

template <class T, int Dp, bool Segmented>
struct triton_attention {
  using params = triton_params<T>;
  using shared_storage = kv_tile_storage<T, Dp>;
  static constexpr int V = head_layout<Dp>::vec;

  static launch_dim grid(const params& p) {
    return {p.in.num_tokens / p.block_q + p.in.num_seqs, p.in.num_kv_heads,
            Segmented ? triton_num_segments : 1};
  }
  static launch_dim block(const params& p) { return {head_layout<Dp>::lanes, p.rows_per_pass, 1}; }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const launch_dim b = ctx.block_idx();
    const auto qs = ctx.global(p.in.query_start);
    const int64_t seq = find_seq_idx(qs, b.x, p.in.num_seqs, p.block_q, true);
    const int64_t q_start = qs.load(seq), q_len = qs.load(seq + 1) - q_start;
    const int64_t local = b.x - (q_start / p.block_q + seq);
    if (local * p.block_q >= q_len) return;  // a slack q-block of the grid
    const int64_t seq_len = ctx.global(p.in.seq_lens).load(seq), ctx_len = seq_len - q_len;
    int64_t lo = 0, hi = seq_len;
    if (Segmented) {  // segment s covers tiles [s*tps, (s+1)*tps); inactive segments write nothing
      const int64_t tps = (seq_len + triton_num_segments * kv_tile_keys - 1) /
                          (triton_num_segments * kv_tile_keys);
      lo = b.z * tps * kv_tile_keys;
      if (lo >= seq_len) return;
      hi = lo + tps * kv_tile_keys < seq_len ? lo + tps * kv_tile_keys : seq_len;
    }
    const int64_t G = p.in.num_heads / p.in.num_kv_heads, rows = p.block_q * G;
    auto st = make_registers<row_state<V>>(ctx);
    for (int64_t base = 0; base < rows; base += p.rows_per_pass) {
      const int64_t first_qi = local * p.block_q + base / G;
      if (first_qi >= q_len) break;  // no valid row left
      const auto row_of = [&](const thread_idx& t) {
        const int64_t m = base + t.y, qi = local * p.block_q + m / G;
        return row_desc{m < rows && qi < q_len, q_start + qi, b.y * G + m % G, ctx_len + qi};
      };
      // Keys any row of the pass can see: causal above, sliding window below.
      const int64_t last_m = (base + p.rows_per_pass < rows ? base + p.rows_per_pass : rows) - 1;
      int64_t last_qi = local * p.block_q + last_m / G;
      if (last_qi > q_len - 1) last_qi = q_len - 1;
      const int64_t w = p.in.sliding_window, first_pos = ctx_len + first_qi;
      const int64_t klo = w > 0 && first_pos - w + 1 > lo ? first_pos - w + 1 : lo;
      const int64_t khi = ctx_len + last_qi + 1 < hi ? ctx_len + last_qi + 1 : hi;
      attend_range<T, Dp>(ctx, p.in, s, row_of, seq, b.y, klo, khi, st);
      if (Segmented)
        store_segment(ctx, p, row_of, st, b.z);
      else
        store_output(ctx, p, row_of, st);
    }
  }

 private:
  template <class Ctx, class RowOf, class Regs>
  HEADROOM_HOST_DEVICE static void store_segment(Ctx& ctx, const params& p, const RowOf& row_of,
                                                 Regs& st, int64_t segment) {
    const auto so = ctx.global(p.segm_output);
    const auto sm = ctx.global(p.segm_max);
    const auto se = ctx.global(p.segm_expsum);
    const int64_t D = p.in.head_size, Dpl = p.head_size_padded;
    ctx.threads([&](const thread_idx& t) {
      const row_desc row = row_of(t);
      if (!row.valid) return;
      const auto& r = st[t];
      const int64_t srow = (row.token * p.in.num_heads + row.head) * triton_num_segments + segment;
      const int64_t d0 = static_cast<int64_t>(t.x) * V;
      if (d0 < D) store_chunk<V>(so, srow * Dpl + d0, D - d0, D - d0 >= V && Dpl % V == 0, r.acc, 1.0f);
      if (t.x == 0) {
        sm.store(srow, r.m);
        se.store(srow, r.l);
      }
    });
  }

  template <class Ctx, class RowOf, class Regs>
  HEADROOM_HOST_DEVICE static void store_output(Ctx& ctx, const params& p, const RowOf& row_of,
                                                Regs& st) {
    const auto out = ctx.global(p.output);
    const int64_t D = p.in.head_size;
    ctx.threads([&](const thread_idx& t) {
      const row_desc row = row_of(t);
      const int64_t d0 = static_cast<int64_t>(t.x) * V;
      if (!row.valid || d0 >= D) return;
      const auto& r = st[t];
      const float inv = r.l > 0.0f ? 1.0f / r.l : 0.0f;
      store_chunk<V>(out, (row.token * p.in.num_heads + row.head) * D + d0, D - d0, D % V == 0, r.acc, inv);
    });
  }
};

// reduce_segments: out[t][h] = sum_s acc_s * exp(m_s - M) / sum_s l_s * exp(m_s - M) over the
// active segments of token t's request (inactive ones were never written and are not read).
template <class T, int Dp>
struct triton_segment_reduce {
  using params = triton_params<T>;
  struct shared_storage {
    int unused;
  };
  static constexpr int V = head_layout<Dp>::vec;

  static launch_dim grid(const params& p) { return {p.in.num_tokens, p.in.num_heads, 1}; }
  static launch_dim block(const params&) { return {head_layout<Dp>::lanes, 1, 1}; }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage&) const {
    const launch_dim b = ctx.block_idx();
    const auto qs = ctx.global(p.in.query_start);
    const int64_t seq = find_seq_idx(qs, b.x, p.in.num_seqs, 1, false);
    const int64_t seq_len = ctx.global(p.in.seq_lens).load(seq);
    const int64_t span = (seq_len + triton_num_segments * kv_tile_keys - 1) /
                         (triton_num_segments * kv_tile_keys) * kv_tile_keys;  // keys per segment
    const int64_t active = (seq_len + span - 1) / span;
    const int64_t row0 = (b.x * p.in.num_heads + b.y) * triton_num_segments;
    const int64_t D = p.in.head_size, Dpl = p.head_size_padded;
    const auto so = ctx.global(p.segm_output);
    const auto sm = ctx.global(p.segm_max);
    const auto se = ctx.global(p.segm_expsum);
    const auto out = ctx.global(p.output);
    ctx.threads([&](const thread_idx& t) {
      const int64_t d0 = static_cast<int64_t>(t.x) * V;
      if (d0 >= D) return;
      float mx = neg_inf();
      for (int64_t s = 0; s < active; ++s) mx = max_f(mx, sm.load(row0 + s));
      float total = 0.0f, acc[V] = {};
      for (int64_t s = 0; s < active; ++s) {
        const float ms = sm.load(row0 + s);
        const float wgt = ms == neg_inf() ? 0.0f : fast_exp(ms - mx);
        total += se.load(row0 + s) * wgt;
        const auto x = load_chunk<V>(so, (row0 + s) * Dpl + d0, D - d0, D - d0 >= V && Dpl % V == 0);
        for (int e = 0; e < V; ++e) acc[e] += wgt * x[e];
      }
      const float inv = total > 0.0f ? 1.0f / total : 0.0f;
      store_chunk<V>(out, (b.x * p.in.num_heads + b.y) * D + d0, D - d0, D % V == 0, acc, inv);
    });
  }
};

}  // namespace headroom
