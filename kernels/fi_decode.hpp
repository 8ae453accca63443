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
#include "kernels/fi_merge.hpp"

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
    const int64_t H = p.in.num_heads, G = H / p.in.num_kv_heads;
    auto rg = make_attn_registers<T, Dp>(ctx);
    for (int64_t base = 0; base < G; base += attn_rows) {
      const auto row_of = [&](int64_t mi) {
        const int64_t m = base + mi;
        return row_desc{m < G, token, kvh * G + m, pos};
      };
      if (base > 0) ctx.sync();  // the previous pass's stores read what this pass overwrites
      attend_range<T, Dp>(ctx, p.in, s, row_of, req, kvh, lo, hi, rg);
      fi_store_rows<Dp>(ctx, s, row_of, p.in.head_size, p.split ? p.tmp_v : p.output, p.tmp_s, p.split,
                        [&](const row_desc& row) { return (p.split ? w : row.token) * H + row.head; });
    }
  }
};

// Merge (fi_merge.hpp): a block per request and head over its work items o_indptr[b] ..
// o_indptr[b + 1], whose count bounds the block's groups. The request's work items and token come
// from the plan and the inputs, read while the attention launch still ends.
template <class T, int Dp>
struct fi_merge_states {
  using params = fi_decode_params<T>;
  static constexpr bool waits_for_prior_launch = true;
  static constexpr int64_t max_groups = fi_merge_max_groups<Dp>;
  using shared_storage = fi_merge_shared<Dp>;

  static launch_dim grid(const params& p) { return {p.in.num_seqs, p.in.num_heads, 1}; }
  // The most work items a request can have: its longest possible length in kv chunks, and no
  // more than the plan's items leave it when every other request has one.
  static int64_t groups(const params& p) {
    const int64_t len = p.in.max_blocks_per_seq * p.in.block_size;
    int64_t items = p.split && p.chunk_tokens > 0 ? (len + p.chunk_tokens - 1) / p.chunk_tokens : 1;
    if (p.split && p.num_work - p.in.num_seqs + 1 < items) items = p.num_work - p.in.num_seqs + 1;
    return items < 1 ? 1 : (items > max_groups ? max_groups : items);
  }
  static launch_dim block(const params& p) { return fi_merge_block<Dp>(groups(p)); }
  static std::size_t shared_bytes(const params& p) { return fi_merge_shared_bytes<Dp>(groups(p)); }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage& sh) const {
    const launch_dim b = ctx.block_idx();
    const auto oi = ctx.global(p.o_indptr);
    const int64_t begin = oi.load(b.x), end = oi.load(b.x + 1);
    const int64_t token = ctx.global(p.in.query_start).load(b.x);
    ctx.wait_prior_launch();  // tmp_v / tmp_s are the attention launch's
    fi_merge_rows<T, Dp>(ctx, sh, p.tmp_v, p.tmp_s, p.output, begin, end, token, p.in.num_heads, b.y,
                         p.in.head_size);
  }
};

}  // namespace headroom
