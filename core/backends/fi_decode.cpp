// FlashInfer batch decode, CUDA-core split-KV path (docs/engines.md §6): the partition search, work items,
// o_indptr and the float workspace, plus what a run with the layer's real heads writes.
#include <algorithm>

#include "core/backends/flashinfer.hpp"
#include "core/util/checked.hpp"

namespace headroom {

int64_t device_params::occupancy(int64_t group_size) const {
  auto it = blocks_per_sm.find(group_size);
  return it == blocks_per_sm.end() ? default_blocks_per_sm : it->second;
}

// Estimates for the decode kernel at D = 128, bf16: group size 1 uses an 8-deep KV tile per bdx
// (64 KiB of shared memory per block: 3 blocks of 228 KiB per SM); larger groups use 8 KiB tiles
// and are limited by registers to 8 blocks. Overridable per case.
device_params h200_params() {
  device_params d;
  d.num_sms = 132;
  d.blocks_per_sm = {{1, 3}};
  d.default_blocks_per_sm = 8;
  return d;
}

namespace {

std::vector<int64_t> pages_of(const batch& b, int64_t page_size) {
  std::vector<int64_t> pages;
  for (int64_t len : b.seq_lens) pages.push_back(std::max<int64_t>(1, ceil_div(len, page_size)));
  return pages;
}

int64_t work_items(const std::vector<int64_t>& pages, int64_t chunk) {
  int64_t n = 0;
  for (int64_t p : pages) n = checked_add(n, ceil_div(p, chunk), "work items");
  return n;
}

// Smallest chunk (pages) with work_items(chunk) * kv <= max_grid, searched in [lo, hi].
int64_t search_chunk(const std::vector<int64_t>& pages, int64_t kv, int64_t max_grid, int64_t lo,
                     int64_t hi) {
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (checked_mul(work_items(pages, mid), kv) > max_grid)
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
  p.max_grid = checked_mul(o.device.occupancy(group), o.device.num_sms, "max_grid");

  const auto pages = pages_of(b, o.page_size);
  const int64_t max_pages = *std::max_element(pages.begin(), pages.end());
  const int64_t nb = b.num_seqs();
  p.chunk_pages = max_pages;
  if (checked_mul(nb, kv_heads) < p.max_grid) {
    const int64_t min_chunk = std::max<int64_t>(fi_min_chunk_tokens / o.page_size, 1);
    const int64_t chunk =
        search_chunk(pages, kv_heads, p.max_grid, min_chunk, std::max(min_chunk, max_pages));
    const int64_t new_batch = work_items(pages, chunk);
    p.split = !(new_batch == nb && !o.cuda_graph);
    if (p.split) p.chunk_pages = chunk;
  }
  p.num_work = p.split ? work_items(pages, p.chunk_pages) : nb;
  p.padded = o.cuda_graph ? (p.split ? p.max_grid / kv_heads : nb) : p.num_work;

  p.o_indptr.assign(1, 0);
  for (std::size_t i = 0; i < pages.size(); ++i) {
    const int64_t chunks = p.split ? ceil_div(pages[i], p.chunk_pages) : 1;
    for (int64_t c = 0; c < chunks; ++c) {
      p.request_indices.push_back(static_cast<int32_t>(i));
      p.kv_tile_indices.push_back(static_cast<int32_t>(c));
    }
    p.o_indptr.push_back(static_cast<int32_t>(p.o_indptr.back() + chunks));
  }
  while (static_cast<int64_t>(p.request_indices.size()) < p.padded) {  // graph padding
    p.request_indices.push_back(p.request_indices.back());
    p.kv_tile_indices.push_back(p.kv_tile_indices.back());
  }
  if (p.split) {
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
