// FlashInfer planners, docs/engines.md §6 and 6: the CUDA-core batch-decode split-KV plan and the
// prefill / tensor-core planner, with the scratch each run writes using the layer's head count.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/backends/batch.hpp"
#include "core/backends/buffers.hpp"
#include "core/model/geometry.hpp"

namespace headroom {

// Device facts the planner reads. Occupancy (blocks per SM) of the decode kernel depends on the
// GQA group size through its shared-memory tile; defaults are estimates for an H200, D = 128.
struct device_params {
  int64_t num_sms = 132;                     // H200 SXM
  std::map<int64_t, int64_t> blocks_per_sm;  // by group size; missing sizes use default_blocks
  int64_t default_blocks_per_sm = 8;
  int64_t occupancy(int64_t group_size) const;
  bool operator==(const device_params&) const = default;
};
device_params h200_params();

struct flashinfer_options {
  bool cuda_graph = false;  // pad work items for graph replay
  int64_t page_size = 16;
  device_params device = h200_params();
  bool operator==(const flashinfer_options&) const = default;
};

inline constexpr int64_t fi_min_chunk_tokens = 128;  // min kv chunk = max(128 / page_size, 1) pages

struct fi_decode_plan {
  int64_t builder_heads = 0, kv_heads = 0, head_size = 0, page_size = 16;
  bool split = false;
  int64_t chunk_pages = 0;  // kv chunk size in pages
  int64_t max_grid = 0;
  int64_t num_work = 0;                  // NB
  int64_t padded = 0;                    // P
  bool group_size_supported = true;      // GQA group in {1,2,3,4,6,8}
  std::vector<int32_t> request_indices;  // P entries (padding repeats the last valid one)
  std::vector<int32_t> kv_tile_indices;  // P entries
  std::vector<int32_t> o_indptr;         // B + 1 entries
  std::vector<buffer_plan> buffers;      // tmp_v, tmp_s (only when split)
};

fi_decode_plan plan_fi_decode(int64_t builder_heads, int64_t kv_heads, int64_t head_size, dtype out,
                              const batch& b, const flashinfer_options& o);

// Largest element index + 1 written per buffer by a run with the layer's heads (split only).
std::vector<buffer_need> fi_decode_needs(const fi_decode_plan& p, const rank_layer& l, dtype out);

struct fi_prefill_plan {
  int64_t builder_heads = 0, kv_heads = 0, head_size = 0;
  int64_t cta_tile_q = 16;  // T_q: 16 / 64 / 128
  bool split = false;
  int64_t kv_chunk_tokens = 0;
  int64_t num_work = 0, padded = 0;  // work items (qo tiles x kv chunks), padded count
  std::vector<int64_t> qo_tiles;     // per request: ceil(qo_len * G_b / T_q)
  std::vector<int64_t> kv_chunks;    // per request
  std::vector<buffer_plan> buffers;  // tmp_v, tmp_s (only when split)
};

fi_prefill_plan plan_fi_prefill(int64_t builder_heads, int64_t kv_heads, int64_t head_size, const batch& b,
                                const flashinfer_options& o);

struct fi_prefill_run {
  std::vector<buffer_need> needs;
  int64_t rows_never_computed = 0;  // (token, qo head) pairs no planned tile covers
};
fi_prefill_run fi_prefill_needs(const fi_prefill_plan& p, const rank_layer& l, const batch& b);

}  // namespace headroom
