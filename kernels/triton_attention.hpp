// Triton unified attention (vLLM TRITON_ATTN, docs/engines.md §5) as kernel bodies:
//   triton_attention<T, Dp, true>   the 3D segmented decode kernel: grid (T/BLOCK_Q + num_seqs, KV,
//                                   16); each active segment writes its unnormalised partial output,
//                                   max and exp-sum with the LAYER's strides:
//                                   segm_output[((t*H + h)*16 + s)*Dp_l + d], segm_max/expsum[(t*H + h)*16 +
//                                   s]
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
  buffer_ref<T> output;           // [tokens][heads][head_size]: 2D path and reduce
  buffer_ref<float> segm_output;  // plan buffer, 3D path
  buffer_ref<float> segm_max;     // plan buffer, 3D path
  buffer_ref<float> segm_expsum;  // plan buffer, 3D path
  int64_t block_q = 16;           // BLOCK_M / G with BLOCK_M = 16 if G <= 16 else next_pow2(G)
  int64_t head_size_padded = 0;   // the layer's Dp: the stride of segm_output rows
  bool segmented = false;         // the 3D path (segm_* buffers, then the reduce)
};

// Longest key range one block of the Triton kernels attends to (a segment, or a whole sequence).
template <class T>
inline int64_t triton_max_keys(const triton_params<T>& p, bool segmented) {
  const int64_t len = p.in.max_blocks_per_seq * p.in.block_size;
  if (!segmented)
    return p.in.sliding_window > 0 && p.in.sliding_window < len ? p.in.sliding_window + p.block_q : len;
  const int64_t span = triton_num_segments * kv_tile_keys;
  return (len + span - 1) / span * kv_tile_keys;
}

// Stages: K/V steps of the tensor-core pass in shared memory per warp (1: a step's K and V in
// flight together; more: steps ahead too). Measured on the H200 (docs/bench.md): 1 stage at two
// blocks per SM beat 2 or 3 stages at one block per SM at every shape but 1x32768 (equal there).
template <class T, int Dp, bool Segmented, int Stages = 1>
struct triton_attention {
  using params = triton_params<T>;
  using shared_storage = attn_shared<T, Dp, Stages>;

  static launch_dim grid(const params& p) {
    return {p.in.num_tokens / p.block_q + p.in.num_seqs, p.in.num_kv_heads,
            Segmented ? triton_num_segments : 1};
  }
  // Tuned on the H200 (docs/bench.md): two blocks of up to 8 warps per SM (128 registers), 64 keys
  // per warp (the 3D path's 256-key segments at 16x4096: 4-warp blocks, four to an SM).
  static constexpr int max_block_threads = attn_max_threads<Dp>, min_blocks_per_sm = attn_min_blocks;
  static constexpr int64_t warp_keys = HEADROOM_TRITON_WARP_KEYS;
  static launch_dim block(const params& p) {
    return attn_block<Dp>(triton_max_keys(p, Segmented), warp_keys);
  }
  static std::size_t shared_bytes(const params& p) { return attn_shared_bytes<T, Dp, Stages>(block(p).y); }

  // The request of q-block b.x and its rows, read from the batch buffers (constructed again after
  // attend_range() for the stores).
  struct q_block {
    int64_t seq = 0, q_start = 0, q_len = 0, ctx_len = 0, local = 0, G = 1, rows = 0, kvh = 0;
    template <class Ctx>
    HEADROOM_HOST_DEVICE q_block(Ctx& ctx, const params& p, launch_dim b) {
      const auto qs = ctx.global(p.in.query_start);
      seq = find_seq_idx(qs, b.x, p.in.num_seqs, p.block_q, true);
      q_start = qs.load(seq), q_len = qs.load(seq + 1) - q_start;
      local = b.x - (q_start / p.block_q + seq);
      ctx_len = ctx.global(p.in.seq_lens).load(seq) - q_len;
      G = p.in.num_heads / p.in.num_kv_heads, rows = p.block_q * G, kvh = b.y;
    }
    HEADROOM_HOST_DEVICE row_desc row(const params& p, int64_t m) const {
      const int64_t qi = local * p.block_q + m / G;
      return row_desc{m < rows && qi < q_len, q_start + qi, kvh * G + m % G, ctx_len + qi};
    }
  };

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const launch_dim b = ctx.block_idx();
    const q_block qb(ctx, p, b);
    if (qb.local * p.block_q >= qb.q_len) return;  // a slack q-block of the grid
    const int64_t seq_len = qb.ctx_len + qb.q_len;
    int64_t lo = 0, hi = seq_len;
    if (Segmented) {  // segment s covers tiles [s*tps, (s+1)*tps); inactive segments write nothing
      const int64_t tps =
          (seq_len + triton_num_segments * kv_tile_keys - 1) / (triton_num_segments * kv_tile_keys);
      lo = b.z * tps * kv_tile_keys;
      if (lo >= seq_len) return;
      hi = lo + tps * kv_tile_keys < seq_len ? lo + tps * kv_tile_keys : seq_len;
    }
    auto rg = make_attn_registers<T, Dp>(ctx);
    for (int64_t base = 0; base < qb.rows; base += attn_rows) {
      const int64_t first_qi = qb.local * p.block_q + base / qb.G;
      if (first_qi >= qb.q_len) break;  // no valid row left
      // Keys any row of the pass can see: causal above, sliding window below.
      const int64_t last_m = (base + attn_rows < qb.rows ? base + attn_rows : qb.rows) - 1;
      int64_t last_qi = qb.local * p.block_q + last_m / qb.G;
      if (last_qi > qb.q_len - 1) last_qi = qb.q_len - 1;
      const int64_t w = p.in.sliding_window, first_pos = qb.ctx_len + first_qi;
      const int64_t klo = w > 0 && first_pos - w + 1 > lo ? first_pos - w + 1 : lo;
      const int64_t khi = qb.ctx_len + last_qi + 1 < hi ? qb.ctx_len + last_qi + 1 : hi;
      if (base > 0) ctx.sync();  // the previous pass's stores read what this pass overwrites
      attend_range<T, Dp>(
          ctx, p.in, s, [&](int64_t mi) { return qb.row(p, base + mi); }, qb.seq, b.y, klo, khi, rg);
      const q_block again(ctx, p, b);
      const auto row_of = [&](int64_t mi) { return again.row(p, base + mi); };
      if (Segmented)
        store_segment(ctx, p, s, row_of, b.z);
      else
        store_output(ctx, p, s, row_of);
    }
  }

 private:
  template <class Ctx, class RowOf>
  HEADROOM_HOST_DEVICE static void store_segment(Ctx& ctx, const params& p, shared_storage& s,
                                                 const RowOf& row_of, int64_t segment) {
    const auto so = ctx.global(p.segm_output);
    const auto sm = ctx.global(p.segm_max);
    const auto se = ctx.global(p.segm_expsum);
    const int64_t D = p.in.head_size, Dpl = p.head_size_padded;
    for_combined_chunks<Dp>(
        ctx, s, row_of, D,
        [&](const row_desc& row, int64_t d0, const float(&acc)[attn_chunk], float M, float L) {
          const int64_t srow = (row.token * p.in.num_heads + row.head) * triton_num_segments + segment;
          store_chunk<attn_chunk>(so, srow * Dpl + d0, D - d0, D - d0 >= attn_chunk && Dpl % attn_chunk == 0,
                                  acc, 1.0f);
          if (d0 == 0) {
            sm.store(srow, M);
            se.store(srow, L);
          }
        });
  }

  template <class Ctx, class RowOf>
  HEADROOM_HOST_DEVICE static void store_output(Ctx& ctx, const params& p, shared_storage& s,
                                                const RowOf& row_of) {
    const auto out = ctx.global(p.output);
    const int64_t D = p.in.head_size;
    for_combined_chunks<Dp>(
        ctx, s, row_of, D,
        [&](const row_desc& row, int64_t d0, const float(&acc)[attn_chunk], float, float L) {
          const int64_t off =
              token_offset(ctx, p.in.int32_offsets, row.token, p.in.num_heads, D, row.head, d0);
          store_chunk<attn_chunk>(out, off, D - d0, D - d0 >= attn_chunk, acc, L > 0.0f ? 1.0f / L : 0.0f);
        });
  }
};

// reduce_segments: out[t][h] = sum_s acc_s * exp(m_s - M) / sum_s l_s * exp(m_s - M) over the
// active segments of token t's request (inactive ones were never written and are not read). The
// request and its length come from inputs, read while the attention launch still ends. Thread
// (x, s) loads segment s's (m, l) and its dims of x (like vLLM's reduce, which loads the
// [segments x Dp] tile at once): one round trip; then lane row 0 combines the segments in order.
template <class T, int Dp>
struct triton_segment_reduce {
  using params = triton_params<T>;
  static constexpr int V = head_layout<Dp>::vec, lanes = head_layout<Dp>::lanes;
  static constexpr int S = static_cast<int>(triton_num_segments);
  struct shared_storage {
    float ml[S * 2];  // per segment (m, l)
    float acc[S * Dp];
  };
  static constexpr bool waits_for_prior_launch = true;

  static launch_dim grid(const params& p) { return {p.in.num_tokens, p.in.num_heads, 1}; }
  static launch_dim block(const params&) { return {lanes, S, 1}; }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage& sh) const {
    const launch_dim b = ctx.block_idx();
    const auto qs = ctx.global(p.in.query_start);
    const int64_t seq = find_seq_idx(qs, b.x, p.in.num_seqs, 1, false);
    const int64_t seq_len = ctx.global(p.in.seq_lens).load(seq);
    ctx.wait_prior_launch();  // the segments below are the attention launch's
    const int64_t span = (seq_len + triton_num_segments * kv_tile_keys - 1) /
                         (triton_num_segments * kv_tile_keys) * kv_tile_keys;  // keys per segment
    const int64_t active = span > 0 ? (seq_len + span - 1) / span : 0;         // a poisoned length: none
    const int64_t row0 = (b.x * p.in.num_heads + b.y) * triton_num_segments;
    const int64_t D = p.in.head_size, Dpl = p.head_size_padded;
    const auto so = ctx.global(p.segm_output);
    const auto sm = ctx.global(p.segm_max);
    const auto se = ctx.global(p.segm_expsum);
    const auto out = ctx.global(p.output);
    const auto as = ctx.template shared<V>(sh.acc, "segm_acc");
    const auto mls = ctx.template shared<1>(sh.ml, "segm_ml");
    ctx.threads([&](const thread_idx& t) {
      const int64_t d0 = static_cast<int64_t>(t.x) * V, s = t.y;
      if (s >= active || d0 >= D) return;
      const auto x = load_chunk<V>(so, (row0 + s) * Dpl + d0, D - d0, D - d0 >= V && Dpl % V == 0);
      fvec<V> a;
      for (int e = 0; e < V; ++e) a[e] = x[e];
      as.template store_vec<V>(s * Dp + d0, a);
      if (t.x == 0) {
        mls.store(s * 2, sm.load(row0 + s));
        mls.store(s * 2 + 1, se.load(row0 + s));
      }
    });
    ctx.sync();
    ctx.threads([&](const thread_idx& t) {
      const int64_t d0 = static_cast<int64_t>(t.x) * V;
      if (t.y != 0 || d0 >= D) return;
      float mx = neg_inf();
      for (int64_t s = 0; s < active; ++s) mx = max_f(mx, mls.load(s * 2));
      float total = 0.0f, acc[V] = {};
      for (int64_t s = 0; s < active; ++s) {
        const float ms = mls.load(s * 2);
        const float wgt = ms == neg_inf() ? 0.0f : fast_exp(ms - mx);
        total += mls.load(s * 2 + 1) * wgt;
        const auto x = as.template load_vec<V>(s * Dp + d0);
        for (int e = 0; e < V; ++e) acc[e] += wgt * x[e];
      }
      const float inv = total > 0.0f ? 1.0f / total : 0.0f;
      store_chunk<V>(out, token_offset(ctx, p.in.int32_offsets, b.x, p.in.num_heads, D, b.y, d0), D - d0,
                     D % V == 0, acc, inv);
    });
  }
};

}  // namespace headroom
