// One planner input and the fields a kernel reads of its plan, as plain data shared by the two
// sides of planner_compare: FlashInfer's own planner (fi_side.cu, built against a FlashInfer checkout)
// and headroom's mirror (planner_compare.cpp). C++17, no headroom or FlashInfer types.
#pragma once

#include <cstdint>
#include <vector>

namespace planner_compare {

struct input {
  bool prefill = false;  // PrefillPlan (also tensor-core decode); else DecodePlan (CUDA-core decode)
  int64_t num_qo_heads = 0, num_kv_heads = 0, head_dim = 0, page_size = 16, num_sms = 132;
  int64_t blocks_per_sm = 2;  // decode: the occupancy the work estimation is given
  bool cuda_graph = false, disable_split_kv = false;
  int64_t window_left = -1, fixed_split_size = -1, uniform_q_len = 0, total_num_rows = 0;
  // Decode: window_left goes to the mirror only (DecodePlanImpl has no window parameter).
  int64_t num_colocated_ctas = 0;        // prefill: POD attention's decode CTAs (PrefillPlanImpl)
  std::vector<int64_t> kv_lens, q_lens;  // tokens per request
};

// Every slot of the int workspace the plan allocates, as the planner left it; slots never written
// hold the sentinel (int32 arrays; a block_valid_mask, when there is one, is written in full).
struct result {
  int64_t split_kv = 0, cta_tile_q = 0, kv_chunk_size = 0, padded_batch_size = 0, new_batch_size = 0;
  int64_t total_num_rows = 0, tmp_v_bytes = 0, tmp_s_bytes = 0;
  bool has_merge_indptr = false, has_block_valid_mask = false;
  std::vector<int32_t> request_indices, qo_tile_indices, kv_tile_indices, o_indptr, merge_indptr;
  std::vector<int32_t> block_valid_mask;  // bytes widened
};

inline constexpr int32_t sentinel = INT32_MIN;

// One PrefillSM90Plan input (the FA3 prefill planner): its own fields, since it takes a causal flag
// and kv lengths beside the indptrs, and none of PrefillPlan's split options.
struct sm90_input {
  int64_t num_qo_heads = 0, num_kv_heads = 0, head_dim_qk = 128, head_dim_vo = 128, page_size = 16;
  int64_t num_sms = 132, total_num_rows = 0;
  int64_t int_workspace_bytes = 0;  // the capacity the planner is given (checked by AlignedAllocator)
  bool causal = false, cuda_graph = false;
  std::vector<int64_t> kv_lens, q_lens;
};

// What PrefillSM90Plan leaves: the part offsets in allocation order, work_indptr (num_sms + 1), and
// each per-work part read over its allocated slots rounded up to the 16-byte alignment (slots never
// written hold the sentinel).
struct sm90_result {
  bool same_schedule_for_all_heads = false;
  std::vector<int64_t> part_offsets;
  std::vector<int32_t> work_indptr, qo_tile_indices, qo_indptr, kv_indptr, qo_len, kv_len, head_indices;
  std::vector<int32_t> batch_indices;
};

// FlashInfer's PrefillSM90Plan on this input (fi_side.cu). Throws std::runtime_error with
// FlashInfer's message when it raises.
sm90_result flashinfer_plan_sm90(const sm90_input& in);

// FlashInfer's planner on this input (fi_side.cu). Throws std::runtime_error on a planner error.
result flashinfer_plan(const input& in);
// Which scheduler.cuh fi_side.cu was compiled against: FlashInfer's, or the test stub (tests/tools/).
const char* flashinfer_side();

}  // namespace planner_compare
