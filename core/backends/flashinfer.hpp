// FlashInfer planners, docs/engines.md §6 and §7: the CUDA-core batch-decode split-KV plan
// (DecodePlan) and the prefill / tensor-core planner (PrefillPlan), field by field as FlashInfer's
// host code writes them, with the scratch each run writes using the layer's head count.
// tools/flashinfer/planner_compare runs both against FlashInfer's own planner (docs/flashinfer-planner.md).
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/backends/batch.hpp"
#include "core/backends/buffers.hpp"
#include "core/model/geometry.hpp"

namespace headroom {

// Device facts the planners read. Occupancy (blocks per SM) of the decode kernel depends on the
// GQA group (its block is head_size / vec x group threads, its shared tile depends on both) and the
// head size: cudaOccupancyMaxActiveBlocksPerMultiprocessor, as tools/flashinfer/occupancy.cu prints
// it. Lookup: blocks_by_head[{group, head_size}], then blocks_per_sm[group], then the default.
struct device_params {
  int64_t num_sms = 132;                                          // H200 SXM
  std::map<int64_t, int64_t> blocks_per_sm;                       // by group size, any head size
  std::map<std::pair<int64_t, int64_t>, int64_t> blocks_by_head;  // by (group size, head size)
  int64_t default_blocks_per_sm = 8;
  // Compute capability (major): FA2DetermineCtaTileQ's 16-row tiles need sm80+; backend="auto"
  // picks fa3 on 9 only (fi_backend.hpp). 9: H100 / H200.
  int64_t compute_major = 9;
  int64_t max_smem_per_block_optin = 232448;  // cudaDevAttrMaxSharedMemoryPerBlockOptin, sm90
  int64_t occupancy(int64_t group_size, int64_t head_size) const;
  bool operator==(const device_params&) const = default;
};
device_params h200_params();

// The plan functions' arguments beyond the geometry and the batch (FlashInfer's names).
struct flashinfer_options {
  bool cuda_graph = false;  // enable_cuda_graph: pad work items for graph replay
  int64_t page_size = 16;
  int64_t window_left = -1;        // sliding window (tokens), -1: none (prefill planner only)
  bool disable_split_kv = false;   // prefill planner only
  int64_t fixed_split_size = -1;   // kv chunk in pages, <= 0: searched (prefill planner only)
  int64_t uniform_q_len = 0;       // > 0: every request has this many query rows (graph tiles)
  int64_t num_colocated_ctas = 0;  // POD attention: CTAs taken from the prefill budget
  int64_t kv_dtype_bytes = 2;      // FA2DetermineCtaTileQ's shared-memory probe
  int64_t o_dtype_bytes = 2;       // sizeof_dtype_o: the prefill kernel's partial outputs (tmp_v) have
                                   // the output's element type in scratch sized in fp32
  // vLLM's use_tensor_cores: decode requests go through the prefill planner and kernel (one query
  // row each) instead of the CUDA-core decode plan.
  bool tensor_core_decode = false;
  // FlashInfer's FA3 backend (backend "fa3"): the prefill and tensor-core decode requests are
  // planned by PrefillSM90Plan (fi_prefill_sm90.hpp), not PrefillPlanImpl. Only the model target
  // judges such plans (no FA3 body runs here).
  bool prefill_sm90 = false;
  // backend="auto" (--flashinfer-prefill auto): each wrapper's backend resolved per attention group
  // as FlashInfer resolves it (fi_backend.hpp); prefill_sm90 is then not read.
  bool prefill_auto = false;
  // vLLM's attention_config.use_trtllm_attention given as False: with an fp8 cache on sm90 the
  // decode wrapper's q is then fp8 too (get_q_data_type; unset or True, q keeps the model's dtype
  // for XQA decode). Read only by auto's decode resolution (fi_backend.hpp).
  bool trtllm_attention_off = false;
  int64_t total_num_rows = 0;  // > 0: the rows a graph was captured for (else the batch's tokens)
  // With cuda_graph, disable_split_kv and uniform_q_len > 0, launch exactly the written work
  // entries (FlashInfer PR 4430, proposed; FlashInfer fb28d72 does not have it: false there). Off, the
  // planner pads past the written entries with no block_valid_mask (catalogue C10).
  bool exact_no_split_graph_grid = true;
  device_params device = h200_params();
  bool operator==(const flashinfer_options&) const = default;
};

inline constexpr int64_t fi_min_chunk_tokens = 128;  // min kv chunk = max(128 / page_size, 1) pages
// The value of a work-entry slot the planner allocates but never writes ([new_batch_size, padded)
// of request / tile indices, o_indptr past B + 1). The comparison driver pre-fills FlashInfer's
// page-locked buffer with it; a kernel that reads such a slot reads this (an out-of-bounds index).
inline constexpr int32_t fi_unwritten = INT32_MIN;

// DecodePlanImpl with BatchDecodeWithPagedKVCacheWorkEstimationDispatched. FlashInfer's names:
// split = split_kv, chunk_pages = kv_chunk_size_in_pages, num_work = new_batch_size,
// padded = padded_batch_size, max_grid = max_grid_size.
struct fi_decode_plan {
  int64_t builder_heads = 0, kv_heads = 0, head_size = 0, page_size = 16;
  bool split = false;
  int64_t chunk_pages = 0;    // kv chunk size in pages
  int64_t kv_chunk_size = 0;  // kv_chunk_size_ptr[0]: chunk_pages * page_size
  int64_t max_grid = 0;
  int64_t num_work = 0;                   // NB: entries written
  int64_t padded = 0;                     // P: grid x, entries allocated
  bool group_size_supported = true;       // GQA group in {1,2,3,4,6,8}
  std::vector<int32_t> request_indices;   // P entries: [NB, P) are fi_unwritten
  std::vector<int32_t> kv_tile_indices;   // P entries: [NB, P) are fi_unwritten
  std::vector<int32_t> o_indptr;          // B + 1 entries written (P + 1 allocated)
  std::vector<uint8_t> block_valid_mask;  // P entries (i < NB), only when split
  std::vector<buffer_plan> buffers;       // tmp_v, tmp_s (only when split)
};

fi_decode_plan plan_fi_decode(int64_t builder_heads, int64_t kv_heads, int64_t head_size, dtype out,
                              const batch& b, const flashinfer_options& o);

// Largest element index + 1 written per buffer by a run with the layer's heads (split only).
std::vector<buffer_need> fi_decode_needs(const fi_decode_plan& p, const rank_layer& l, dtype out);

// PrefillPlanImpl with PrefillSplitQOKVIndptr (also the tensor-core decode plan: query length 1).
struct fi_prefill_plan {
  int64_t builder_heads = 0, kv_heads = 0, head_size = 0, batch_size = 0;
  bool group_divisible = true;  // num_qo_heads % num_kv_heads == 0 (else FlashInfer's plan raises)
  bool split_kv = false;
  bool cuda_graph = false;        // enable_cuda_graph (one more int part: total_num_rows)
  int64_t cta_tile_q = 16;        // 16 / 32 / 64 / 128 (FA2DetermineCtaTileQ)
  int64_t kv_chunk_size = 0;      // kv_chunk_size_ptr[0], int32 as stored (tokens)
  int64_t new_batch_size = 0;     // work entries written: (request, qo tile, kv chunk)
  int64_t padded_batch_size = 0;  // grid x, entries allocated
  int64_t total_num_rows = 0;
  std::vector<int32_t> request_indices;   // padded entries: [new, padded) are fi_unwritten
  std::vector<int32_t> qo_tile_indices;   // idem
  std::vector<int32_t> kv_tile_indices;   // idem
  std::vector<int32_t> o_indptr;          // B + 1 entries
  std::vector<int32_t> merge_indptr;      // only when split: total_num_rows + 1 entries
  std::vector<uint8_t> block_valid_mask;  // only when split: padded entries (i < new)
  std::vector<int64_t> qo_tiles;          // per request (derived): ceil(qo_len * G_b / T_q)
  std::vector<int64_t> kv_chunks;         // per request (derived): kv chunks of each tile
  std::vector<buffer_plan> buffers;       // tmp_v, tmp_s (only when split)
};

fi_prefill_plan plan_fi_prefill(int64_t builder_heads, int64_t kv_heads, int64_t head_size, const batch& b,
                                const flashinfer_options& o);

struct fi_prefill_run {
  std::vector<buffer_need> needs;
  int64_t rows_never_computed = 0;  // (token, qo head) pairs no planned tile covers (split: whose
                                    // partial states all lie inside tmp_s, as a target sees them)
};
// What a run with the layer's heads reads and writes: the merge reads every partial row (o_indptr's
// total) for each of the layer's heads, so that is the scratch need; and the (token, head) rows no
// planned tile covers.
fi_prefill_run fi_prefill_needs(const fi_prefill_plan& p, const rank_layer& l, const batch& b);

// FlashInfer's plan carves its parts out of two workspaces with AlignedAllocator: each part starts
// at the next multiple of its alignment, and the plan raises ("Buffer overflow when allocating
// memory for ...") when a part does not fit. These are the bytes from a workspace's start to the
// end of the plan's last part there, alignment padding included (scheduler.cuh at fb28d72):
// - the int workspace (DecodePlanImpl): request_indices and kv_tile_indices (P int32 each),
//   o_indptr (P + 1), kv_chunk_size (one int32, alignment 1), block_valid_mask (P bytes, only when
//   split); alignment 16 but for the chunk size;
// - the int workspace (PrefillPlanImpl): request_indices, qo_tile_indices, kv_tile_indices (P
//   each), o_indptr (batch_size + 1), kv_chunk_size (alignment 1), total_num_rows (one uint32,
//   only with CUDA graphs), merge_indptr (total_num_rows + 1) and block_valid_mask (P bytes), both
//   only when split;
// - the float workspace: tmp_v, then tmp_s (only when split; `parts` are the plan's buffers).
// FlashInfer copies the used int bytes from its page-locked host buffer, which must hold them too.
int64_t fi_int_workspace_bytes(const fi_decode_plan& p);
int64_t fi_int_workspace_bytes(const fi_prefill_plan& p);
int64_t fi_float_workspace_bytes(const std::vector<buffer_plan>& parts);

// FA2DetermineCtaTileQ: the query tile height for a packed query length.
int64_t fi_cta_tile_q(int64_t packed_qo_len, int64_t head_dim, int64_t kv_dtype_bytes,
                      const device_params& d);

}  // namespace headroom
