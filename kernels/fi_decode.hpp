// FlashInfer batch decode, CUDA-core split-KV path (docs/engines.md §6), as kernel bodies:
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
  int64_t padded = 0;                         // P: grid x
  int64_t num_work = 0;                       // NB: valid work items
  int64_t chunk_tokens = 0;                   // kv chunk = chunk_pages * page_size
  bool split = false;
};

// Longest key range one decode block attends to: a kv chunk, or a whole (windowed) sequence.
template <class T>
inline int64_t fi_max_keys(const fi_decode_params<T>& p) {
  const int64_t len = p.in.max_blocks_per_seq * p.in.block_size;
  const int64_t keys = p.split && p.chunk_tokens < len ? p.chunk_tokens : len;
  return p.in.sliding_window > 0 && p.in.sliding_window < keys ? p.in.sliding_window : keys;
}

// Stages as for triton_attention (measured: 1 stage at two blocks per SM best at every shape).
template <class T, int Dp, int Stages = 1>
struct fi_batch_decode {
  using params = fi_decode_params<T>;
  using shared_storage = attn_shared<T, Dp, Stages>;

  static launch_dim grid(const params& p) { return {p.padded, p.in.num_kv_heads, 1}; }
  // Tuned on the H200 (docs/bench.md): 128 registers (two blocks of 8 warps per SM) and 256 keys
  // per warp, so FlashInfer's many short work items (256-key chunks at 1x32768) run as 1-warp
  // blocks, 16 to an SM (shared memory is sized per launch: shared_bytes).
  static constexpr int max_block_threads = attn_max_threads<Dp>, min_blocks_per_sm = attn_min_blocks;
  static constexpr int64_t warp_keys = HEADROOM_FI_WARP_KEYS;
  static launch_dim block(const params& p) { return attn_block<Dp>(fi_max_keys(p), warp_keys); }
  static std::size_t shared_bytes(const params& p) { return attn_shared_bytes<T, Dp, Stages>(block(p).y); }

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
    auto rg = make_attn_registers<T, Dp>(ctx);
    for (int64_t base = 0; base < G; base += attn_rows) {
      const auto row_of = [&](int64_t mi) {
        const int64_t m = base + mi;
        return row_desc{m < G, token, kvh * G + m, pos};
      };
      if (base > 0) ctx.sync();  // the previous pass's stores read what this pass overwrites
      attend_range<T, Dp>(ctx, p.in, s, row_of, req, kvh, lo, hi, rg);
      store_partial(ctx, p, s, row_of, w);
    }
  }

 private:
  template <class Ctx, class RowOf>
  HEADROOM_HOST_DEVICE static void store_partial(Ctx& ctx, const params& p, shared_storage& s,
                                                 const RowOf& row_of, int64_t w) {
    const auto tv = ctx.global(p.tmp_v);
    const auto ts = ctx.global(p.tmp_s);
    const auto out = ctx.global(p.output);
    const int64_t D = p.in.head_size, H = p.in.num_heads;
    for_combined_chunks<Dp>(
        ctx, s, row_of, D,
        [&](const row_desc& row, int64_t d0, const float(&acc)[attn_chunk], float M, float L) {
          const float inv = L > 0.0f ? 1.0f / L : 0.0f;
          const bool whole = D - d0 >= attn_chunk;
          if (!p.split) {
            store_chunk<attn_chunk>(out, (row.token * H + row.head) * D + d0, D - d0, whole, acc, inv);
            return;
          }
          store_chunk<attn_chunk>(tv, (w * H + row.head) * D + d0, D - d0, whole, acc, inv);
          if (d0 == 0) ts.store(w * H + row.head, L > 0.0f ? M + log_f(L) : neg_inf());
        });
  }
};

// Merge: G groups of `lanes` threads take every G-th work item of the request with an online
// maximum (independent loads, one pass), then group 0 combines the groups' states. Each round of a
// group is a dependent round trip, so G is the most work items a request can have (up to
// fi_merge_max_groups): one round when they fit. The request's work items and token come from the
// plan and the inputs, read while the attention launch still ends.
template <int Dp>
inline constexpr int64_t fi_merge_max_groups =
    512 / head_layout<Dp>::lanes < 32 ? 512 / head_layout<Dp>::lanes : 32;

template <class T, int Dp>
struct fi_merge_states {
  using params = fi_decode_params<T>;
  static constexpr bool waits_for_prior_launch = true;
  static constexpr int V = head_layout<Dp>::vec, lanes = head_layout<Dp>::lanes;
  static constexpr int64_t max_groups = fi_merge_max_groups<Dp>;
  struct shared_storage {  // groups' (m, l), then their accumulators: a launch allocates G of them
    float ms[max_groups * 2];
    float acc[max_groups * Dp];
  };

  static launch_dim grid(const params& p) { return {p.in.num_seqs, p.in.num_heads, 1}; }
  // The most work items a request can have: its longest possible length in kv chunks, and no
  // more than the plan's items leave it when every other request has one.
  static int64_t groups(const params& p) {
    const int64_t len = p.in.max_blocks_per_seq * p.in.block_size;
    int64_t items = p.split && p.chunk_tokens > 0 ? (len + p.chunk_tokens - 1) / p.chunk_tokens : 1;
    if (p.split && p.num_work - p.in.num_seqs + 1 < items) items = p.num_work - p.in.num_seqs + 1;
    return items < 1 ? 1 : (items > max_groups ? max_groups : items);
  }
  static launch_dim block(const params& p) { return {lanes, groups(p), 1}; }
  static std::size_t shared_bytes(const params& p) {
    return sizeof(float) * static_cast<std::size_t>(2 * max_groups + groups(p) * Dp);
  }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage& sh) const {
    const launch_dim b = ctx.block_idx();
    const auto oi = ctx.global(p.o_indptr);
    const int64_t begin = oi.load(b.x), end = oi.load(b.x + 1);
    const int64_t token = ctx.global(p.in.query_start).load(b.x);
    ctx.wait_prior_launch();  // tmp_v / tmp_s are the attention launch's
    const int64_t D = p.in.head_size, H = p.in.num_heads, h = b.y;
    const auto tv = ctx.global(p.tmp_v);
    const auto ts = ctx.global(p.tmp_s);
    const auto out = ctx.global(p.output);
    const int64_t G = ctx.block_dim().y;
    const auto as = ctx.template shared<V>(sh.acc, G * Dp, "merge_acc");
    const auto mss = ctx.template shared<1>(sh.ms, "merge_ms");
    ctx.threads([&](const thread_idx& t) {
      const int64_t d0 = static_cast<int64_t>(t.x) * V;
      float mx = neg_inf(), total = 0.0f, acc[V] = {};
      for (int64_t w = begin + t.y; w < end; w += G) {
        const float lse = ts.load(w * H + h);
        vec<T, V> x{};
        if (d0 < D) x = load_chunk<V>(tv, (w * H + h) * D + d0, D - d0, D % V == 0);
        if (lse == neg_inf()) continue;  // an empty chunk: weight 0
        const float mn = max_f(mx, lse), scale = fast_exp(mx - mn), wgt = fast_exp(lse - mn);
        total = total * scale + wgt;
        for (int e = 0; e < V; ++e) acc[e] = acc[e] * scale + wgt * to_float(x[e]);
        mx = mn;
      }
      fvec<V> a;
      for (int e = 0; e < V; ++e) a[e] = acc[e];
      as.template store_vec<V>(t.y * Dp + t.x * V, a);
      if (t.x == 0) {
        mss.store(t.y * 2, mx);
        mss.store(t.y * 2 + 1, total);
      }
    });
    ctx.sync();
    ctx.threads([&](const thread_idx& t) {
      const int64_t d0 = static_cast<int64_t>(t.x) * V;
      if (t.y != 0 || d0 >= D) return;
      float mx = neg_inf(), total = 0.0f, acc[V] = {};
      for (int64_t g = 0; g < G; ++g) mx = max_f(mx, mss.load(g * 2));
      for (int64_t g = 0; g < G && mx != neg_inf(); ++g) {
        const float mg = mss.load(g * 2);
        if (mg == neg_inf()) continue;
        const float wgt = fast_exp(mg - mx);
        total += wgt * mss.load(g * 2 + 1);
        const auto x = as.template load_vec<V>(g * Dp + t.x * V);
        for (int e = 0; e < V; ++e) acc[e] += wgt * x[e];
      }
      const float inv = total > 0.0f ? 1.0f / total : 0.0f;
      store_chunk<V>(out, (token * H + h) * D + d0, D - d0, D % V == 0, acc, inv);
    });
  }
};

}  // namespace headroom
