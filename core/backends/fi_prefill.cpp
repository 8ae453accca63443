// FlashInfer prefill / tensor-core planner (docs/engines.md §7): qo tiles over packed rows, kv chunks, the
// over-sized scratch, and the rows a run with more heads per kv head than planned never computes.
#include <algorithm>

#include "core/backends/flashinfer.hpp"
#include "core/util/checked.hpp"

namespace headroom {
namespace {

// Tile height from the average packed qo length (FlashInfer FA2DetermineCtaTileQ, sm80+).
int64_t cta_tile_q(int64_t avg_packed, int64_t head_size) {
  if (avg_packed > 64 && head_size < 256) return 128;
  return avg_packed > 16 ? 64 : 16;
}

int64_t prefill_work(const std::vector<int64_t>& tiles, const batch& b, int64_t chunk) {
  int64_t n = 0;
  for (std::size_t i = 0; i < tiles.size(); ++i)
    n = checked_add(n, checked_mul(tiles[i], ceil_div(b.seq_lens[i], chunk)), "prefill work");
  return n;
}

}  // namespace

fi_prefill_plan plan_fi_prefill(int64_t builder_heads, int64_t kv_heads, int64_t head_size, const batch& b,
                                const flashinfer_options& o) {
  fi_prefill_plan p;
  p.builder_heads = builder_heads;
  p.kv_heads = kv_heads;
  p.head_size = head_size;
  const int64_t group = std::max<int64_t>(1, builder_heads / std::max<int64_t>(1, kv_heads));
  int64_t packed_total = 0, max_kv = 0;
  for (std::size_t i = 0; i < b.seq_lens.size(); ++i) {
    packed_total = checked_add(packed_total, checked_mul(b.query_lens[i], group), "packed rows");
    max_kv = std::max(max_kv, b.seq_lens[i]);
  }
  p.cta_tile_q = cta_tile_q(packed_total / b.num_seqs(), head_size);
  for (std::size_t i = 0; i < b.seq_lens.size(); ++i)
    p.qo_tiles.push_back(ceil_div(checked_mul(b.query_lens[i], group), p.cta_tile_q));

  // Smallest kv chunk (tokens) whose work items fit max_grid / kv, at least 128 tokens.
  const int64_t budget = checked_mul(o.device.occupancy(group), o.device.num_sms) / kv_heads;
  int64_t lo = std::max<int64_t>(fi_min_chunk_tokens / o.page_size, 1) * o.page_size;
  int64_t hi = std::max(lo, max_kv);
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (prefill_work(p.qo_tiles, b, mid) > budget)
      lo = mid + 1;
    else
      hi = mid;
  }
  p.kv_chunk_tokens = lo;
  p.split = lo < max_kv;
  if (!p.split) p.kv_chunk_tokens = max_kv;
  for (std::size_t i = 0; i < b.seq_lens.size(); ++i)
    p.kv_chunks.push_back(ceil_div(b.seq_lens[i], p.kv_chunk_tokens));
  p.num_work = prefill_work(p.qo_tiles, b, p.kv_chunk_tokens);
  p.padded = o.cuda_graph ? std::max(p.num_work, budget) : p.num_work;
  if (p.split) {
    const int64_t rows = checked_product("prefill tmp rows", builder_heads, p.padded, p.cta_tile_q);
    p.buffers = {{"tmp_v", checked_product("tmp_v bytes", rows, head_size, 4), 4},
                 {"tmp_s", checked_mul(rows, 4, "tmp_s bytes"), 4}};
  }
  return p;
}

fi_prefill_run fi_prefill_needs(const fi_prefill_plan& p, const rank_layer& l, const batch& b) {
  fi_prefill_run r;
  const int64_t group_l = l.num_heads / l.num_kv_heads;
  int64_t row_end = 0, row_base = 0;  // partial-state rows: o_indptr over (token, kv chunk)
  for (std::size_t i = 0; i < b.seq_lens.size(); ++i) {
    const int64_t planned = checked_mul(p.qo_tiles[i], p.cta_tile_q, "planned rows");
    const int64_t packed = checked_mul(b.query_lens[i], group_l, "packed rows");
    if (packed > planned)
      r.rows_never_computed =
          checked_add(r.rows_never_computed, checked_mul(packed - planned, l.num_kv_heads));
    const int64_t covered = std::min(b.query_lens[i], planned / group_l);
    if (covered > 0) row_end = std::max(row_end, row_base + covered * p.kv_chunks[i]);
    row_base = checked_add(row_base, checked_mul(b.query_lens[i], p.kv_chunks[i]));
  }
  if (p.split) {
    const int64_t rows = checked_mul(row_end, l.num_heads, "prefill tmp rows");
    r.needs = {{"tmp_v", 4, checked_mul(rows, l.head_size, "tmp_v index")}, {"tmp_s", 4, rows}};
  }
  return r;
}

}  // namespace headroom
