// FlashInfer batch decode, CUDA-core split-KV path (docs/engines.md §6), as DecodePlanImpl writes it:
// the work estimation (occupancy budget, chunk search in pages), the work entries with their
// unwritten padded tail, o_indptr, block_valid_mask and the float workspace, plus what a run with
// the layer's real heads writes.
#include <algorithm>

#include "core/backends/flashinfer.hpp"
#include "core/util/checked.hpp"

namespace headroom {
namespace {

// kv_indptr differences: pages per request (a request holds at least one token).
std::vector<int64_t> pages_of(const batch& b, int64_t page_size) {
  std::vector<int64_t> pages;
  for (int64_t len : b.seq_lens) pages.push_back(ceil_div(len, page_size));
  return pages;
}

int64_t work_items(const std::vector<int64_t>& pages, int64_t chunk) {
  int64_t n = 0;
  for (int64_t p : pages) n = checked_add(n, ceil_div(std::max<int64_t>(p, 1), chunk), "work items");
  return n;
}

// PartitionPagedKVCacheBinarySearchMinNumPagePerBatch: the smallest chunk (pages) in
// [lo, max pages] with work_items * gdy <= max_grid; lo itself when lo >= max pages.
int64_t search_chunk(const std::vector<int64_t>& pages, int64_t gdy, int64_t max_grid, int64_t lo) {
  int64_t hi = *std::max_element(pages.begin(), pages.end());
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (checked_mul(work_items(pages, mid), gdy) > max_grid)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

bool supported_group(int64_t h, int64_t kv) {
  if (kv <= 0 || h % kv != 0) return false;
  int64_t g = h / kv;
  return g == 1 || g == 2 || g == 3 || g == 4 || g == 6 || g == 8;
}

}  // namespace

fi_decode_plan plan_fi_decode(int64_t builder_heads, int64_t kv_heads, int64_t head_size, dtype out,
                              const batch& b, const flashinfer_options& o) {
  fi_decode_plan p;
  p.builder_heads = builder_heads;
  p.kv_heads = kv_heads;
  p.head_size = head_size;
  p.page_size = o.page_size;
  p.group_size_supported = supported_group(builder_heads, kv_heads);
  const int64_t group = std::max<int64_t>(1, builder_heads / std::max<int64_t>(1, kv_heads));
  const int64_t gdy = kv_heads;  // grid y
  p.max_grid = checked_mul(o.device.occupancy(group, head_size), o.device.num_sms, "max_grid");

  // Work estimation: no split when the batch alone fills the grid; else the chunk search, and a
  // split unless every request stays one chunk (always under CUDA graphs).
  const auto pages = pages_of(b, o.page_size);
  const int64_t nb = b.num_seqs();
  if (checked_mul(nb, gdy) >= p.max_grid) {
    p.chunk_pages = std::max<int64_t>(1, *std::max_element(pages.begin(), pages.end()));
    p.num_work = nb;
  } else {
    p.chunk_pages =
        search_chunk(pages, gdy, p.max_grid, std::max<int64_t>(fi_min_chunk_tokens / o.page_size, 1));
    p.num_work = work_items(pages, p.chunk_pages);
    p.split = !(p.num_work == nb && !o.cuda_graph);
  }
  p.kv_chunk_size = checked_mul(p.chunk_pages, o.page_size, "kv_chunk_size");
  p.padded = o.cuda_graph ? (p.split ? p.max_grid / gdy : nb) : p.num_work;

  // DecodeSplitKVIndptr over the chunk found (also when not split: one chunk per request then).
  p.o_indptr.assign(1, 0);
  for (std::size_t i = 0; i < pages.size(); ++i) {
    const int64_t chunks = ceil_div(std::max<int64_t>(pages[i], 1), p.chunk_pages);
    for (int64_t c = 0; c < chunks; ++c) {
      p.request_indices.push_back(static_cast<int32_t>(i));
      p.kv_tile_indices.push_back(static_cast<int32_t>(c));
    }
    p.o_indptr.push_back(static_cast<int32_t>(p.o_indptr.back() + chunks));
  }
  if (p.num_work > p.padded)
    throw std::logic_error("flashinfer decode plan: more work entries than the padded grid");
  p.request_indices.resize(p.padded, fi_unwritten);  // allocated, never written by the planner
  p.kv_tile_indices.resize(p.padded, fi_unwritten);
  if (p.split) {
    for (int64_t i = 0; i < p.padded; ++i) p.block_valid_mask.push_back(i < p.num_work ? 1 : 0);
    const int64_t rows = checked_mul(builder_heads, p.padded, "tmp rows");
    p.buffers = {{"tmp_v", checked_product("tmp_v bytes", rows, head_size, 4), dtype_bytes(out)},
                 {"tmp_s", checked_mul(rows, 4, "tmp_s bytes"), 4}};
  }
  return p;
}

std::vector<buffer_need> fi_decode_needs(const fi_decode_plan& p, const rank_layer& l, dtype out) {
  if (!p.split) return {};
  const int64_t rows = checked_mul(p.num_work, l.num_heads, "tmp rows");
  return {{"tmp_v", dtype_bytes(out), checked_mul(rows, l.head_size, "tmp_v index")}, {"tmp_s", 4, rows}};
}

}  // namespace headroom
