// FlashInfer prefill / tensor-core decode planner (docs/engines.md §7), as PrefillPlanImpl and
// PrefillSplitQOKVIndptr write it: packed query rows, the tile height, the kv chunk search over
// pages against 2 blocks per SM, the CUDA-graph padding, and the scratch; plus the rows a run with
// more heads per kv head than planned never computes.
#include <algorithm>
#include <limits>

#include "core/backends/flashinfer.hpp"
#include "core/util/checked.hpp"
#include "core/util/error.hpp"

namespace headroom {
namespace {

struct tiling {
  int64_t cta_tile_q = 16, total_num_tiles_q = 0;
};

// The tile height and the tile count the padding assumes. Graphs: sized for the uniform length, or
// for the largest request a replay may hold (all rows but one per other request).
tiling tile_rows(const std::vector<int64_t>& packed, int64_t group, int64_t total_rows, int64_t head_size,
                 const flashinfer_options& o) {
  const int64_t bs = static_cast<int64_t>(packed.size());
  tiling t;
  auto tile = [&](int64_t len) { return fi_cta_tile_q(len, head_size, o.kv_dtype_bytes, o.device); };
  if (o.cuda_graph && o.uniform_q_len > 0) {
    const int64_t len = checked_mul(o.uniform_q_len, group, "packed uniform length");
    for (std::size_t i = 0; i < packed.size(); ++i)
      if (packed[i] != len)
        throw input_error(
            "batch", "query_lens[" + std::to_string(i) + "]", std::to_string(packed[i] / group),
            "uniform_q_len " + std::to_string(o.uniform_q_len) + " promises every request that many");
    t.cta_tile_q = tile(len);
    t.total_num_tiles_q = checked_mul(bs, ceil_div(len, t.cta_tile_q), "tiles");
  } else if (o.cuda_graph) {
    t.cta_tile_q = tile(checked_mul(total_rows - bs + 1, group, "packed rows"));
    t.total_num_tiles_q = ceil_div(checked_mul(total_rows, group), t.cta_tile_q) + bs - 1;
  } else {
    int64_t sum = 0;
    for (int64_t p : packed) sum = checked_add(sum, p, "packed rows");
    t.cta_tile_q = tile(sum / bs);
    for (int64_t p : packed) t.total_num_tiles_q += ceil_div(p, t.cta_tile_q);
  }
  return t;
}

// PrefillBinarySearchKVChunkSize: the smallest chunk (pages) whose work fits the budget.
int64_t search_chunk(const std::vector<int64_t>& packed, const std::vector<int64_t>& kv_pages, int64_t tile,
                     int64_t budget, int64_t lo) {
  int64_t hi = 1;
  for (int64_t k : kv_pages) hi = std::max(hi, k);
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    int64_t work = 0;
    for (std::size_t i = 0; i < packed.size(); ++i)
      work = checked_add(
          work, checked_mul(ceil_div(packed[i], tile), ceil_div(std::max<int64_t>(kv_pages[i], 1), mid)));
    if (work > budget)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

int64_t max_pages(const std::vector<int64_t>& kv_pages) {
  int64_t hi = 1;
  for (int64_t k : kv_pages) hi = std::max(hi, k);
  return hi;
}

}  // namespace

fi_prefill_plan plan_fi_prefill(int64_t builder_heads, int64_t kv_heads, int64_t head_size, const batch& b,
                                const flashinfer_options& o) {
  if (kv_heads <= 0 || builder_heads <= 0)
    throw input_error("flashinfer", "num_kv_heads", std::to_string(kv_heads),
                      "at least 1 (and num_qo_heads too)");
  fi_prefill_plan p;
  p.cuda_graph = o.cuda_graph;
  // FlashInfer raises when num_qo_heads is not a multiple of num_kv_heads; a builder planning with
  // a model-wide count can hit that (recorded; the plan then packs floor(H / KV) rows, at least 1).
  p.group_divisible = builder_heads % kv_heads == 0;
  p.builder_heads = builder_heads;
  p.kv_heads = kv_heads;
  p.head_size = head_size;
  p.batch_size = b.num_seqs();
  const int64_t group = std::max<int64_t>(1, builder_heads / kv_heads);
  const int64_t budget = std::max<int64_t>(0, 2 * o.device.num_sms - o.num_colocated_ctas) / kv_heads;
  p.total_num_rows = o.total_num_rows > 0 ? o.total_num_rows : b.num_tokens();

  std::vector<int64_t> packed, kv_pages, eff_pages;
  for (std::size_t i = 0; i < b.seq_lens.size(); ++i) {
    packed.push_back(checked_mul(b.query_lens[i], group, "packed rows"));
    kv_pages.push_back(ceil_div(b.seq_lens[i], o.page_size));
  }
  const tiling t = tile_rows(packed, group, p.total_num_rows, head_size, o);
  p.cta_tile_q = t.cta_tile_q;
  // A window bounds the kv a tile reads: window_left + the tile's own rows, in pages.
  for (int64_t k : kv_pages)
    eff_pages.push_back(o.window_left >= 0 ? std::min(k, ceil_div(o.window_left + p.cta_tile_q, o.page_size))
                                           : k);

  int64_t chunk = std::numeric_limits<int64_t>::max();  // pages; disable_split_kv: one chunk
  if (!o.disable_split_kv && o.fixed_split_size > 0) {
    chunk = o.fixed_split_size;
  } else if (!o.disable_split_kv) {
    chunk = search_chunk(packed, eff_pages, p.cta_tile_q, budget, std::max<int64_t>(128 / o.page_size, 1));
    p.split_kv = o.cuda_graph || chunk < max_pages(eff_pages);
  }

  p.o_indptr.assign(1, 0);
  std::vector<int32_t> merge(1, 0);
  for (std::size_t i = 0; i < packed.size(); ++i) {
    const int64_t tiles = ceil_div(packed[i], p.cta_tile_q);
    const int64_t chunks = o.disable_split_kv ? 1 : ceil_div(std::max<int64_t>(eff_pages[i], 1), chunk);
    if (o.fixed_split_size > 0 && !o.disable_split_kv) p.split_kv = p.split_kv || chunks > 1;
    for (int64_t q = 0; q < tiles; ++q)
      for (int64_t c = 0; c < chunks; ++c) {
        p.request_indices.push_back(static_cast<int32_t>(i));
        p.qo_tile_indices.push_back(static_cast<int32_t>(q));
        p.kv_tile_indices.push_back(static_cast<int32_t>(c));
      }
    for (int64_t r = 0; r < b.query_lens[i]; ++r)
      merge.push_back(static_cast<int32_t>(merge.back() + chunks));
    p.o_indptr.push_back(static_cast<int32_t>(p.o_indptr.back() + b.query_lens[i] * chunks));
    p.qo_tiles.push_back(tiles);
    p.kv_chunks.push_back(chunks);
  }
  p.new_batch_size = static_cast<int64_t>(p.request_indices.size());
  const bool exact = o.exact_no_split_graph_grid && o.disable_split_kv && o.uniform_q_len > 0;
  p.padded_batch_size = o.cuda_graph && !exact ? std::max(budget, t.total_num_tiles_q) : p.new_batch_size;
  if (p.new_batch_size > p.padded_batch_size)
    throw input_error("flashinfer", "fixed_split_size", std::to_string(o.fixed_split_size),
                      "more work entries than the CUDA-graph grid: disable CUDA graphs");
  // The chunk in tokens, stored into an int32 slot (the one-chunk sentinel wraps, as upstream).
  p.kv_chunk_size = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(chunk) * o.page_size));
  for (auto* v : {&p.request_indices, &p.qo_tile_indices, &p.kv_tile_indices})
    v->resize(p.padded_batch_size, fi_unwritten);  // allocated, never written by the planner
  if (p.split_kv) {
    p.merge_indptr = std::move(merge);  // total_num_rows + 1 allocated; the tail past the tokens unwritten
    if (static_cast<int64_t>(p.merge_indptr.size()) < p.total_num_rows + 1)
      p.merge_indptr.resize(p.total_num_rows + 1, fi_unwritten);
    for (int64_t i = 0; i < p.padded_batch_size; ++i)
      p.block_valid_mask.push_back(i < p.new_batch_size ? 1 : 0);
    const int64_t rows =
        checked_product("prefill tmp rows", builder_heads, p.padded_batch_size, p.cta_tile_q);
    p.buffers = {{"tmp_v", checked_product("tmp_v bytes", rows, head_size, 4), o.o_dtype_bytes},
                 {"tmp_s", checked_mul(rows, 4, "tmp_s bytes"), 4}};
  }
  return p;
}

namespace {

// Whether a target can see that (query row t, head h) of a split run was never computed: every
// partial state of it (merge_indptr[t] .. merge_indptr[t + 1]) lies inside tmp_s. A state past the
// buffer is one a target cannot tell unwritten (had its tile run, it would have stored past the
// end: that is the capacity finding), so the targets take it as written and the row as computed.
bool split_row_visible(const fi_prefill_plan& p, int64_t t, int64_t heads, int64_t h, int64_t tmp_s_elems) {
  if (t + 1 >= static_cast<int64_t>(p.merge_indptr.size())) return true;  // no partial rows at all
  const int64_t first = p.merge_indptr[static_cast<std::size_t>(t)];
  const int64_t end = p.merge_indptr[static_cast<std::size_t>(t + 1)];
  return first >= end || checked_add(checked_mul(end - 1, heads, "tmp_s row"), h, "tmp_s row") < tmp_s_elems;
}

}  // namespace

fi_prefill_run fi_prefill_needs(const fi_prefill_plan& p, const rank_layer& l, const batch& b) {
  fi_prefill_run r;
  const int64_t group_l = l.num_heads / l.num_kv_heads;
  const buffer_plan* s = p.split_kv ? find_buffer(p.buffers, "tmp_s") : nullptr;
  int64_t token = 0;
  for (std::size_t i = 0; i < b.seq_lens.size(); ++i) {
    const int64_t planned = checked_mul(p.qo_tiles[i], p.cta_tile_q, "planned rows");
    const int64_t packed = checked_mul(b.query_lens[i], group_l, "packed rows");
    if (!s && packed > planned)
      r.rows_never_computed = checked_add(
          r.rows_never_computed, checked_mul(packed - planned, l.num_kv_heads), "rows never computed");
    for (int64_t row = planned; s && row < packed;
         ++row)  // packed row: query row / G, head kvh * G + row % G
      for (int64_t kvh = 0; kvh < l.num_kv_heads; ++kvh)
        if (split_row_visible(p, token + row / group_l, l.num_heads, kvh * group_l + row % group_l,
                              s->capacity_elems()))
          r.rows_never_computed = checked_add(r.rows_never_computed, 1, "rows never computed");
    token = checked_add(token, b.query_lens[i], "query rows");
  }
  if (p.split_kv && !p.o_indptr.empty()) {
    const buffer_plan* v = find_buffer(p.buffers, "tmp_v");
    const int64_t rows = checked_mul(p.o_indptr.back(), l.num_heads, "prefill tmp rows");
    r.needs = {{"tmp_v", v ? v->elem_bytes : 4, checked_mul(rows, l.head_size, "tmp_v index")},
               {"tmp_s", 4, rows}};
  }
  return r;
}

}  // namespace headroom
