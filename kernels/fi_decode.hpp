// FlashInfer batch decode, CUDA-core split-KV path (SPEC.md 5), as kernel bodies:
//   fi_batch_decode   grid (P, KV): block w handles work item w < NB (padding items exit, as with
//                     block_valid_mask): request request_indices[w], kv chunk kv_tile_indices[w].
//                     Split: writes tmp_v[(w*H + h)*D + d] (output dtype) and tmp_s[w*H + h] (the
//                     chunk's log-sum-exp, fp32) with the LAYER's head count H. Not split: writes
//                     the output row of the request directly.
//   fi_merge_states   grid (B, H): merges rows o_indptr[b] .. o_indptr[b+1] of tmp_v / tmp_s
//                     (VariableLengthMergeStates) into the output.
#pragma once

#include "kernels/attend_range.hpp"

namespace headroom {

template <class T>
struct fi_decode_params {
  paged_attention_inputs<T> in;
  buffer_ref<const int32_t> request_indices;  // P entries
  buffer_ref<const int32_t> kv_tile_indices;  // P entries
  buffer_ref<const int32_t> o_indptr;         // B + 1 entries
  buffer_ref<T> output;                       // [tokens][heads][head_size]
  buffer_ref<T> tmp_v;                        // plan buffer (split)
  buffer_ref<float> tmp_s;                    // plan buffer (split)
  int64_t padded = 0;        // P: grid x
  int64_t num_work = 0;      // NB: valid work items
  int64_t chunk_tokens = 0;  // kv chunk = chunk_pages * page_size
  int64_t rows_per_pass = 1; // block.y: query heads of the group handled at once
  bool split = false;
};

template <class T, int Dp>
struct fi_batch_decode {
  using params = fi_decode_params<T>;
  using shared_storage = kv_tile_storage<T, Dp>;
  static constexpr int V = head_layout<Dp>::vec;

  static launch_dim grid(const params& p) { return {p.padded, p.in.num_kv_heads, 1}; }
  static launch_dim block(const params& p) { return {head_layout<Dp>::lanes, p.rows_per_pass, 1}; }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const launch_dim b = ctx.block_idx();
    const int64_t w = b.x, kvh = b.y;
    if (w >= p.num_work) return;  // a padded work item (block_valid_mask false)
    const int64_t req = ctx.global(p.request_indices).load(w);
    const int64_t tile = ctx.global(p.kv_tile_indices).load(w);
    const int64_t seq_len = ctx.global(p.in.seq_lens).load(req);
    const int64_t token = ctx.global(p.in.query_start).load(req), pos = seq_len - 1;
    int64_t lo = 0, hi = seq_len;
    if (p.split) {
      lo = tile * p.chunk_tokens;
      hi = lo + p.chunk_tokens < seq_len ? lo + p.chunk_tokens : seq_len;
    }
    if (p.in.sliding_window > 0 && pos - p.in.sliding_window + 1 > lo) lo = pos - p.in.sliding_window + 1;
    const int64_t G = p.in.num_heads / p.in.num_kv_heads;
    auto st = make_registers<row_state<V>>(ctx);
    for (int64_t base = 0; base < G; base += p.rows_per_pass) {
      const auto row_of = [&](const thread_idx& t) {
        const int64_t m = base + t.y;
        return row_desc{m < G, token, kvh * G + m, pos};
      };
      attend_range<T, Dp>(ctx, p.in, s, row_of, req, kvh, lo, hi, st);
      store_partial(ctx, p, row_of, st, w);
    }
  }

 private:
  template <class Ctx, class RowOf, class Regs>
  HEADROOM_HOST_DEVICE static void store_partial(Ctx& ctx, const params& p, const RowOf& row_of,
                                                 Regs& st, int64_t w) {
    const auto tv = ctx.global(p.tmp_v);
    const auto ts = ctx.global(p.tmp_s);
    const auto out = ctx.global(p.output);
    const int64_t D = p.in.head_size, H = p.in.num_heads;
    ctx.threads([&](const thread_idx& t) {
      const row_desc row = row_of(t);
      if (!row.valid) return;
      const auto& r = st[t];
      const int64_t d0 = static_cast<int64_t>(t.x) * V;
      const float inv = r.l > 0.0f ? 1.0f / r.l : 0.0f;
      if (!p.split) {
        if (d0 < D) store_chunk<V>(out, (row.token * H + row.head) * D + d0, D - d0, D % V == 0, r.acc, inv);
        return;
      }
      if (d0 < D) store_chunk<V>(tv, (w * H + row.head) * D + d0, D - d0, D % V == 0, r.acc, inv);
      if (t.x == 0) ts.store(w * H + row.head, r.l > 0.0f ? r.m + log_f(r.l) : neg_inf());
    });
  }
};

template <class T, int Dp>
struct fi_merge_states {
  using params = fi_decode_params<T>;
  struct shared_storage {
    int unused;
  };
  static constexpr int V = head_layout<Dp>::vec;

  static launch_dim grid(const params& p) { return {p.in.num_seqs, p.in.num_heads, 1}; }
  static launch_dim block(const params&) { return {head_layout<Dp>::lanes, 1, 1}; }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage&) const {
    const launch_dim b = ctx.block_idx();
    const auto oi = ctx.global(p.o_indptr);
    const int64_t begin = oi.load(b.x), end = oi.load(b.x + 1);
    const int64_t token = ctx.global(p.in.query_start).load(b.x);
    const int64_t D = p.in.head_size, H = p.in.num_heads, h = b.y;
    const auto tv = ctx.global(p.tmp_v);
    const auto ts = ctx.global(p.tmp_s);
    const auto out = ctx.global(p.output);
    ctx.threads([&](const thread_idx& t) {
      const int64_t d0 = static_cast<int64_t>(t.x) * V;
      if (d0 >= D) return;
      float mx = neg_inf();
      for (int64_t w = begin; w < end; ++w) mx = max_f(mx, ts.load(w * H + h));
      float total = 0.0f, acc[V] = {};
      for (int64_t w = begin; w < end; ++w) {
        const float lse = ts.load(w * H + h);
        const float wgt = lse == neg_inf() ? 0.0f : fast_exp(lse - mx);
        total += wgt;
        const auto x = load_chunk<V>(tv, (w * H + h) * D + d0, D - d0, D % V == 0);
        for (int e = 0; e < V; ++e) acc[e] += wgt * to_float(x[e]);
      }
      const float inv = total > 0.0f ? 1.0f / total : 0.0f;
      store_chunk<V>(out, (token * H + h) * D + d0, D - d0, D % V == 0, acc, inv);
    });
  }
};

}  // namespace headroom
