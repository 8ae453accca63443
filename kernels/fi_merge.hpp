// What FlashInfer's decode and prefill bodies share: the store of a pass's rows (normalized output,
// and the partial log-sum-exp when the plan splits the kv), and the merge of partial states
// (VariableLengthMergeStates) of one output row and head. fi_decode.hpp and fi_prefill.hpp differ
// only in which rows they read and write.
#pragma once

#include "kernels/attend_shared.hpp"

namespace headroom {

// Stores every valid row of a pass (attend_range's combined state): row `row` goes to element row
// dst_row(row) of dst (dst_row(row) * D + d), normalized; with `lse`, its natural-log log-sum-exp
// (-inf for a row that saw no key) to lse[dst_row(row)].
template <int Dp, class Ctx, class Sh, class RowOf, class T, class DstRow>
HEADROOM_HOST_DEVICE void fi_store_rows(Ctx& ctx, Sh& s, const RowOf& row_of, int64_t D, buffer_ref<T> dst,
                                        buffer_ref<float> lse, bool with_lse, const DstRow& dst_row) {
  const auto out = ctx.global(dst);
  const auto ls = ctx.global(lse);
  for_combined_chunks<Dp>(
      ctx, s, row_of, D,
      [&](const row_desc& row, int64_t d0, const float(&acc)[attn_chunk], float M, float L) {
        const float inv = L > 0.0f ? 1.0f / L : 0.0f;
        const int64_t r = dst_row(row);
        store_chunk<attn_chunk>(out, r * D + d0, D - d0, D - d0 >= attn_chunk, acc, inv);
        if (with_lse && d0 == 0) ls.store(r, L > 0.0f ? M + log_f(L) : neg_inf());
      });
}

// Merge: G groups of `lanes` threads take every G-th partial state of the row with an online
// maximum (independent loads, one pass), then group 0 combines the groups' states. Each round of a
// group is a dependent round trip, so G is the most partial states a row can have (up to
// fi_merge_max_groups): one round when they fit.
template <int Dp>
inline constexpr int64_t fi_merge_max_groups =
    512 / head_layout<Dp>::lanes < 32 ? 512 / head_layout<Dp>::lanes : 32;

template <int Dp>
struct fi_merge_shared {  // groups' (m, l), then their accumulators: a launch allocates G of them
  float ms[fi_merge_max_groups<Dp> * 2];
  float acc[fi_merge_max_groups<Dp> * Dp];
};

// The merge's block for rows of at most `items` partial states: `lanes` threads per group.
template <int Dp>
inline launch_dim fi_merge_block(int64_t items) {
  const int64_t g = items < 1 ? 1 : (items > fi_merge_max_groups<Dp> ? fi_merge_max_groups<Dp> : items);
  return {head_layout<Dp>::lanes, g, 1};
}
template <int Dp>
inline std::size_t fi_merge_shared_bytes(int64_t groups) {
  return sizeof(float) * static_cast<std::size_t>(2 * fi_merge_max_groups<Dp> + groups * Dp);
}

// Merges partial states begin .. end - 1 (rows of H heads: tmp_v[(w * H + h) * D + d], tmp_s[w * H
// + h]) of head h into out[(out_row * H + h) * D + d]; no state (begin == end) writes zeros.
template <class T, int Dp, class Ctx>
HEADROOM_HOST_DEVICE void fi_merge_rows(Ctx& ctx, fi_merge_shared<Dp>& sh, buffer_ref<T> tmp_v,
                                        buffer_ref<float> tmp_s, buffer_ref<T> output, int64_t begin,
                                        int64_t end, int64_t out_row, int64_t H, int64_t h, int64_t D) {
  constexpr int V = head_layout<Dp>::vec;
  const auto tv = ctx.global(tmp_v);
  const auto ts = ctx.global(tmp_s);
  const auto out = ctx.global(output);
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
    store_chunk<V>(out, (out_row * H + h) * D + d0, D - d0, D % V == 0, acc, inv);
  });
}

}  // namespace headroom
