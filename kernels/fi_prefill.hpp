// FlashInfer batch prefill over the paged KV cache (BatchPrefillWithPagedKVCacheKernel, and
// VariableLengthMergeStates when the plan splits the kv; docs/kernels-prefill.md), as kernel bodies:
//   fi_batch_prefill  grid (P, KV): block (w, kvh) exits when a block_valid_mask is given and
//                     mask[w] is 0; otherwise it reads request_indices[w], qo_tile_indices[w] and
//                     kv_tile_indices[w] (a plan that launches more blocks than entries it wrote,
//                     without a mask, reads never-written entries here: catalogue C10). Its rows are
//                     the request's packed rows [tile * cta_tile_q, + cta_tile_q) clipped to
//                     qo_len * G (packed row r: query r / G, head kvh * G + r % G, with the LAYER's
//                     G = H / KV). Not split: writes output row o_indptr[req] + r / G. Split: writes
//                     partial row (o_indptr[req] + (r / G) * num_kv_chunks + kv_tile) of tmp_v
//                     (output dtype) and tmp_s (log-sum-exp, fp32), rows of H heads. Inside the
//                     tile: the tile pass (attend_tile.hpp, a warp per 16 packed rows) for bf16 /
//                     fp16 with whole, aligned rows up to head size 256; else passes of attn_rows
//                     rows through attend_range(). fi_batch_prefill<..., WG = true> is the same
//                     body with the tile pass on warpgroup products (attend_tile_wg.hpp), the
//                     kernel launch_plan takes where fi_prefill_wg holds.
//   fi_prefill_merge  grid (R, H), R = total_num_rows: merges partial rows merge_indptr[t] ..
//                     merge_indptr[t + 1] into output row t.
#pragma once

#include "kernels/attend_range.hpp"
#include "kernels/attend_tile.hpp"
#include "kernels/fi_merge.hpp"

namespace headroom {

template <class T>
struct fi_prefill_params {
  paged_attention_inputs<T> in;
  buffer_ref<const int32_t> request_indices;   // P entries (padded)
  buffer_ref<const int32_t> qo_tile_indices;   // P entries
  buffer_ref<const int32_t> kv_tile_indices;   // P entries
  buffer_ref<const int32_t> o_indptr;          // B + 1 entries
  buffer_ref<const int32_t> merge_indptr;      // total_num_rows + 1 entries (split)
  buffer_ref<const uint8_t> block_valid_mask;  // P entries (split); extent 0: no mask
  buffer_ref<T> output;                        // [tokens][heads][head_size]
  buffer_ref<T> tmp_v;                         // plan buffer (split), output dtype
  buffer_ref<float> tmp_s;                     // plan buffer (split)
  int64_t padded = 0;                          // P: grid x
  int64_t cta_tile_q = 16;                     // packed rows per q tile
  int64_t kv_chunk_tokens = 0;                 // keys per kv chunk (split)
  int64_t total_num_rows = 0;                  // R: query rows the merge writes
  bool split = false;
  fastdiv32 group_div;  // num_heads / num_kv_heads as a fastdiv32 (the host's; the kernel checks it)
};

// One work item as its block reads it: the request's lengths, its packed rows, its keys.
struct fi_prefill_item {
  int64_t req = 0, kv_tile = 0, qo_start = 0, qo_len = 0, kv_len = 0, o_base = 0;
  int64_t rows_lo = 0, rows_hi = 0;  // packed rows
  int64_t lo = 0, hi = 0;            // keys of the item's chunk
  int64_t num_kv_chunks = 1;         // partial rows per query row (split)
};

// The item of block w, with FlashInfer's formulas: a window moves the first key of the tile
// (kv_start) and the chunks with it, and bounds the chunks a row has (num_kv_chunks).
template <class T, class Ctx>
HEADROOM_HOST_DEVICE fi_prefill_item fi_prefill_work(Ctx& ctx, const fi_prefill_params<T>& p, int64_t w) {
  fi_prefill_item it;
  it.req = ctx.global(p.request_indices).load(w);
  const int64_t qo_tile = ctx.global(p.qo_tile_indices).load(w);
  it.kv_tile = ctx.global(p.kv_tile_indices).load(w);
  const auto qs = ctx.global(p.in.query_start);
  it.qo_start = qs.load(it.req);
  it.qo_len = qs.load(it.req + 1) - it.qo_start;
  it.kv_len = ctx.global(p.in.seq_lens).load(it.req);
  it.o_base = ctx.global(p.o_indptr).load(it.req);
  const int64_t G = p.in.num_heads / p.in.num_kv_heads, ctq = p.cta_tile_q;
  it.rows_lo = qo_tile * ctq;
  it.rows_hi = it.rows_lo + ctq < it.qo_len * G ? it.rows_lo + ctq : it.qo_len * G;
  const int64_t window_left = p.in.sliding_window > 0 ? p.in.sliding_window - 1 : it.kv_len;
  const int64_t start = it.kv_len + it.rows_lo / G - (it.qo_len + window_left);
  const int64_t kv_start = start > 0 ? start : 0;
  it.lo = kv_start;
  it.hi = it.kv_len;
  if (p.split) {
    const int64_t c = p.kv_chunk_tokens > 0 ? p.kv_chunk_tokens : 1, lo = it.kv_tile * c + kv_start;
    it.lo = lo < it.kv_len ? lo : it.kv_len;
    it.hi = lo + c < it.kv_len ? lo + c : it.kv_len;
    const int64_t len = it.kv_len > 0 ? it.kv_len : 1;
    const int64_t span = len < window_left + ctq ? len : window_left + ctq;
    it.num_kv_chunks = (span + c - 1) / c;
  }
  return it;
}

// The group's divisor for p.group_div (num_heads / num_kv_heads), computed on the host; none where
// the group is not a positive 31-bit count. The kernel uses it only where it equals the layer's group.
template <class T>
fastdiv32 fi_prefill_group_div(const paged_attention_inputs<T>& in) {
  if (in.num_kv_heads <= 0) return {};
  const int64_t G = in.num_heads / in.num_kv_heads;
  return G >= 1 && G <= INT32_MAX ? fastdiv32(static_cast<uint32_t>(G)) : fastdiv32();
}

// Longest key range one pass attends to: a chunk, or a sequence; a window bounds it to the window
// plus the pass's rows.
template <class T>
inline int64_t fi_prefill_max_keys(const fi_prefill_params<T>& p) {
  const int64_t len = p.in.max_blocks_per_seq * p.in.block_size;
  const int64_t keys = p.split && p.kv_chunk_tokens < len ? p.kv_chunk_tokens : len;
  const int64_t win = p.in.sliding_window + attn_rows;
  return p.in.sliding_window > 0 && win < keys ? win : keys;
}

// Whether a prefill runs the tile pass (attend_tile.hpp): bf16 / fp16 up to head size 256, rows
// whole and aligned (q, K, V and the rows it writes: the tile pass stores aligned pairs).
// Otherwise passes of attn_rows rows through attend_range() (CUDA cores for fp32 and head size
// 512, unaligned rows on tensor cores too). Uniform over the launch.
template <class T, int Dp>
HEADROOM_HOST_DEVICE bool fi_prefill_tiled(const fi_prefill_params<T>& p) {
  if constexpr (attn_on_tensor_cores<T, Dp>) {
    const T* dst = p.split ? p.tmp_v.data : p.output.data;
    return mma_rows_aligned<Dp>(p.in) && reinterpret_cast<uintptr_t>(dst) % 16 == 0;
  } else {
    return false;
  }
}

// The two passes' shared storage, one at a time.
struct fi_no_tile {
  int64_t unused;
};
template <class T, int Dp, int Stages>
struct fi_prefill_shared {
  using tile_storage = std::conditional_t<attn_on_tensor_cores<T, Dp>, tile_shared<T, Dp>, fi_no_tile>;
  union {
    attn_shared<T, Dp, Stages> range;
    tile_storage tile;
  };
};

// Whether a launch runs fi_batch_prefill's warpgroup kernel (WG): the tile pass at head sizes 64 and
// 128 in blocks of whole warpgroups (attend_tile_wg.hpp). The same work, indexing and buffers as
// the other kernel; only the inside of a tile differs.
template <class T, int Dp>
inline constexpr bool fi_prefill_has_wg = tile_wg_fits<Dp>&& attn_on_tensor_cores<T, Dp>;
template <class T, int Dp>
inline bool fi_prefill_wg(const fi_prefill_params<T>& p) {
  if constexpr (fi_prefill_has_wg<T, Dp>)
    return fi_prefill_tiled<T, Dp>(p) && tile_wg_launch<Dp>(p.cta_tile_q);
  else
    return false;
}

template <class T, int Dp, int Stages = 1, bool WG = false>
struct fi_batch_prefill {
  using params = fi_prefill_params<T>;
  using shared_storage = fi_prefill_shared<T, Dp, Stages>;

  static launch_dim grid(const params& p) { return {p.padded, p.in.num_kv_heads, 1}; }
  static constexpr bool on_tensor_cores = attn_on_tensor_cores<T, Dp>;
  static constexpr int max_block_threads = on_tensor_cores && 32 * tile_max_warps<Dp> > attn_max_threads<Dp>
                                               ? 32 * tile_max_warps<Dp>
                                               : attn_max_threads<Dp>;
  static constexpr int min_blocks_per_sm = on_tensor_cores ? HEADROOM_TILE_MIN_BLOCKS : attn_min_blocks;
  static constexpr int64_t warp_keys = HEADROOM_FI_WARP_KEYS;
  static launch_dim block(const params& p) {
    if (fi_prefill_tiled<T, Dp>(p)) return tile_block<Dp>(p.cta_tile_q);
    return attn_block<Dp>(fi_prefill_max_keys(p), warp_keys);
  }
  static std::size_t shared_bytes(const params& p) {
    if constexpr (on_tensor_cores)
      if (fi_prefill_tiled<T, Dp>(p))
        return tile_shared<T, Dp>::bytes(block(p).y, !tile_q_in_regs<Dp> || (WG && tile_wg_fits<Dp>));
    return attn_shared_bytes<T, Dp, Stages>(block(p).y);
  }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const launch_dim b = ctx.block_idx();
    const int64_t w = b.x, kvh = b.y;
    if (p.block_valid_mask.extent > 0 && ctx.global(p.block_valid_mask).load(w) == 0) return;
    const fi_prefill_item it = fi_prefill_work(ctx, p, w);
    const int64_t H = p.in.num_heads, G = H / p.in.num_kv_heads, shift = it.kv_len - it.qo_len;
    // Output row of query qi (request-relative): o_indptr + qi, or its partial row when split.
    const auto out_row = [&](int64_t qi) {
      return p.split ? it.o_base + qi * it.num_kv_chunks + it.kv_tile : it.o_base + qi;
    };
    if constexpr (on_tensor_cores) {
      if (fi_prefill_tiled<T, Dp>(p)) {
        tile_span sp{it.req, it.qo_start, shift, G, kvh, it.rows_lo, it.rows_hi, it.lo, it.hi, {}};
        if constexpr (WG)  // the mma kernel has no registers to spare for it
          if (p.group_div.d == G && it.rows_hi + tile_rows * tile_max_warps<Dp> < (int64_t{1} << 31))
            sp.gdiv = p.group_div;
        attend_tile<T, Dp, WG>(ctx, p.in, s.tile, sp, p.split ? p.tmp_v : p.output, p.tmp_s, p.split,
                               [&](int64_t qi, int64_t head) { return out_row(qi) * H + head; });
        return;
      }
    }
    // The warpgroup kernel is launched only where the tile pass runs (fi_prefill_wg), yet keeps
    // this fallback: compiled without it, ptxas gives the kernel fewer registers and serializes its
    // warpgroup products (C7511).
    const int64_t win = p.in.sliding_window;
    auto rg = make_attn_registers<T, Dp>(ctx);
    for (int64_t base = it.rows_lo; base < it.rows_hi; base += attn_rows) {
      const int64_t last = (base + attn_rows < it.rows_hi ? base + attn_rows : it.rows_hi) - 1;
      const auto row_of = [&](int64_t mi) {
        const int64_t r = base + mi;
        const bool valid = r <= last;
        const int64_t qi = (valid ? r : base) / G;
        return row_desc{valid, it.qo_start + qi, kvh * G + (valid ? r : base) % G, shift + qi};
      };
      // The pass's keys: the item's, cut to what its first row may see and its last row sees.
      const int64_t first_key = win > 0 ? shift + base / G - win + 1 : it.lo;
      const int64_t lo = first_key > it.lo ? first_key : it.lo;
      const int64_t hi = shift + last / G + 1 < it.hi ? shift + last / G + 1 : it.hi;
      if (base > it.rows_lo) ctx.sync();  // the previous pass's stores read what this pass overwrites
      attend_range<T, Dp>(ctx, p.in, s.range, row_of, it.req, kvh, lo, hi, rg);
      fi_store_rows<Dp>(ctx, s.range, row_of, p.in.head_size, p.split ? p.tmp_v : p.output, p.tmp_s, p.split,
                        [&](const row_desc& row) { return out_row(row.token - it.qo_start) * H + row.head; });
    }
  }
};

// Calls f.template operator()<K>() with the fi_batch_prefill kernel a launch of p runs: the
// warpgroup kernel where fi_prefill_wg holds, else the other (launch_plan, and the benchmark's
// occupancy query, decide through this one place).
template <class T, int Dp, class F>
void with_prefill_kernel(const fi_prefill_params<T>& p, F&& f) {
  if constexpr (fi_prefill_has_wg<T, Dp>)
    if (fi_prefill_wg<T, Dp>(p)) return f.template operator()<fi_batch_prefill<T, Dp, 1, true>>();
  f.template operator()<fi_batch_prefill<T, Dp>>();
}

// The merge (fi_merge.hpp): a block per query row and head; a row has at most as many partial
// rows as its longest possible sequence has chunks.
template <class T, int Dp>
struct fi_prefill_merge {
  using params = fi_prefill_params<T>;
  static constexpr bool waits_for_prior_launch = true;
  using shared_storage = fi_merge_shared<Dp>;

  static launch_dim grid(const params& p) { return {p.total_num_rows, p.in.num_heads, 1}; }
  static int64_t groups(const params& p) {
    const int64_t len = p.in.max_blocks_per_seq * p.in.block_size, c = p.kv_chunk_tokens;
    return p.split && c > 0 ? (len + c - 1) / c : 1;
  }
  static launch_dim block(const params& p) { return fi_merge_block<Dp>(groups(p)); }
  static std::size_t shared_bytes(const params& p) { return fi_merge_shared_bytes<Dp>(block(p).y); }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage& sh) const {
    const launch_dim b = ctx.block_idx();
    const auto mi = ctx.global(p.merge_indptr);
    const int64_t begin = mi.load(b.x), end = mi.load(b.x + 1);
    ctx.wait_prior_launch();  // tmp_v / tmp_s are the attention launch's
    fi_merge_rows<T, Dp>(ctx, sh, p.tmp_v, p.tmp_s, p.output, begin, end, b.x, p.in.num_heads, b.y,
                         p.in.head_size);
  }
};

}  // namespace headroom
