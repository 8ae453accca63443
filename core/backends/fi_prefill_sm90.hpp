// FlashInfer's Hopper (FA3) prefill planner, PrefillSM90Plan (scheduler.cuh at fb28d72): requests
// by kv length, query tiles of 128 rows (192 when head_dim_vo is 64) dealt to one CTA per SM through
// a min-heap of accumulated cost, the per-CTA work lists flattened CTA by CTA, and the int workspace
// parts they take. No float workspace: this planner never splits the kv. check and plan run it with
// --flashinfer-prefill fa3 (core/check/plans.cpp); tools/flashinfer/planner_compare --sm90 runs it
// against FlashInfer's own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/backends/batch.hpp"
#include "core/backends/buffers.hpp"
#include "core/backends/flashinfer.hpp"

namespace headroom {

// What PrefillSM90Plan writes. Work entries are CTA-major: CTA c owns [work_indptr[c],
// work_indptr[c + 1]); within a CTA, in the order the heap dealt them.
struct fi_prefill_sm90_plan {
  int64_t builder_heads = 0, kv_heads = 0, head_dim_vo = 0, batch_size = 0, total_num_rows = 0;
  bool causal = false, cuda_graph = false;
  int64_t num_ctas = 0;    // one per SM (cudaDevAttrMultiProcessorCount)
  int64_t cta_tile_q = 0;  // 128, or 192 when head_dim_vo == 64
  // ceil(total_num_rows / T_q) + B - 1: the works one head can have whatever the lengths, if
  // total_num_rows covers the batch's query rows.
  int64_t max_works_per_head = 0;
  bool same_schedule_for_all_heads = false;  // max_works_per_head > 4096: head 0 only is scheduled
  int64_t total_works = 0;                   // entries written
  int64_t allocated_works = 0;  // entries each per-work part holds: graphs the bound, else total_works
  std::vector<int32_t> qo_tile_indices, qo_indptr, kv_indptr, qo_len, kv_len, head_indices, batch_indices;
  std::vector<int32_t> work_indptr;  // num_ctas + 1
  // Under graphs with total_num_rows short of the batch's rows, more entries are written than the
  // parts hold: the host copy runs into the next part and past the used bytes (the device copy then
  // stops short of the last part's tail).
  bool works_past_parts() const { return total_works > allocated_works; }
  // The workspaces it is carved from, when known (check: the int workspace; never a kernel's buffer).
  std::vector<buffer_plan> buffers;
};

// The query rows of one tile: a 64-wide value head leaves shared memory for 192, else 128.
inline int64_t fi_sm90_cta_tile_q(int64_t head_dim_vo) { return head_dim_vo == 64 ? 192 : 128; }
// Above this many works per head (ceil(total_num_rows / T_q) + B - 1) the planner schedules head 0
// only and every head reuses it.
inline constexpr int64_t fi_sm90_same_schedule_above = 4096;

// builder_heads / kv_heads: num_qo_heads / num_kv_heads. Reads o.cuda_graph, o.page_size (the unit
// of kv_indptr: FlashInfer is handed page offsets for a paged cache; page_size 1 gives the token
// offsets of a ragged one), o.total_num_rows (0: the batch's tokens) and o.device.num_sms. Throws
// input_error where FlashInfer raises (heads not a multiple, negative lengths) and where an int32
// slot of FlashInfer's would have to hold more than 2^31 - 1 (reported, never wrapped).
fi_prefill_sm90_plan plan_fi_prefill_sm90(int64_t builder_heads, int64_t kv_heads, int64_t head_dim_vo,
                                          const batch& b, const flashinfer_options& o, bool causal);

// One int workspace part as AlignedAllocator places it (16-byte alignment from a 16-byte-aligned
// start), in allocation order, under FlashInfer's names (batch_prefill_sm90_*).
struct fi_workspace_part {
  std::string name;
  int64_t offset = 0, bytes = 0;
};
std::vector<fi_workspace_part> fi_int_workspace_parts(const fi_prefill_sm90_plan& p);
// The bytes from the int workspace's start to the end of the last part (the page-locked buffer,
// which FlashInfer does not check, must hold them too).
int64_t fi_int_workspace_bytes(const fi_prefill_sm90_plan& p);
// The first part that does not fit `capacity` bytes: the one FlashInfer's "Buffer overflow when
// allocating memory for ..." names before any kernel runs. Empty when everything fits.
std::string fi_int_workspace_overflow(const fi_prefill_sm90_plan& p, int64_t capacity);

}  // namespace headroom
