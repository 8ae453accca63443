// Test fixture, not FlashInfer code: the part of FlashInfer's include/flashinfer/attention/scheduler.cuh
// that tools/flashinfer/fi_side.cu calls, with the same names and parameter lists and trivial bodies
// (no plan is computed; every offset is 0, every size 0). CI has no FlashInfer checkout; building
// planner_compare against this header still compiles fi_side.cu and links the whole driver
// (tests/tools/). When fi_side.cu starts to call something new of FlashInfer's, add it here.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <tuple>
#include <vector>

#define HEADROOM_FI_STUB_SCHEDULER 1

namespace flashinfer {

class Error : public std::exception {
 public:
  explicit Error(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

enum class PosEncodingMode { kNone = 0U, kRoPELlama = 1U, kALiBi = 2U };

struct DecodePlanInfo {
  int64_t padded_batch_size = 0, v_offset = 0, s_offset = 0, request_indices_offset = 0;
  int64_t kv_tile_indices_offset = 0, o_indptr_offset = 0, block_valid_mask_offset = 0;
  int64_t kv_chunk_size_ptr_offset = 0;
  bool enable_cuda_graph = false, split_kv = false;
};

struct PrefillPlanInfo {
  int64_t padded_batch_size = 0, total_num_rows = 0, total_num_rows_offset = 0, cta_tile_q = 0;
  int64_t request_indices_offset = 0, qo_tile_indices_offset = 0, kv_tile_indices_offset = 0;
  int64_t merge_indptr_offset = 0, o_indptr_offset = 0, kv_chunk_size_ptr_offset = 0, v_offset = 0;
  int64_t s_offset = 0, block_valid_mask_offset = 0;
  bool enable_cuda_graph = false, split_kv = false;
};

// (pages per chunk, chunks): one chunk per request.
template <typename IdType>
inline auto PartitionPagedKVCacheBinarySearchMinNumPagePerBatch(const uint32_t max_grid_size,
                                                                const uint32_t gdy,
                                                                const std::vector<IdType>& num_pages,
                                                                const uint32_t min_num_pages_per_batch = 1) {
  (void)max_grid_size, (void)gdy;
  return std::make_tuple(min_num_pages_per_batch, static_cast<uint32_t>(num_pages.size()));
}

// Asks the work estimation as the real planner does (so its signature is checked), plans nothing.
template <bool MATERIALIZE, uint32_t HEAD_DIM, PosEncodingMode POS_ENCODING_MODE, typename AttentionVariant,
          typename Params, typename WorkEstimationFunc>
inline cudaError_t DecodePlanImpl(size_t& float_workspace_size_out, size_t& int_workspace_size_out,
                                  void* float_buffer, size_t float_workspace_size_in_bytes, void* int_buffer,
                                  void* page_locked_int_buffer, size_t int_workspace_size_in_bytes,
                                  DecodePlanInfo& plan_info, typename Params::IdType* indptr_h,
                                  uint32_t batch_size, uint32_t num_qo_heads, uint32_t page_size,
                                  bool enable_cuda_graph, cudaStream_t stream,
                                  WorkEstimationFunc work_estimation_func) {
  (void)float_buffer, (void)float_workspace_size_in_bytes, (void)int_buffer, (void)page_locked_int_buffer;
  (void)int_workspace_size_in_bytes;
  bool split_kv = false;
  uint32_t max_grid_size = 0, kv_chunk_size_in_pages = 0, new_batch_size = 0, gdy = 0;
  cudaError_t status =
      work_estimation_func(split_kv, max_grid_size, kv_chunk_size_in_pages, new_batch_size, gdy, batch_size,
                           indptr_h, num_qo_heads, page_size, enable_cuda_graph, stream);
  float_workspace_size_out = int_workspace_size_out = 0;
  plan_info = DecodePlanInfo{};
  return status;
}

// Asks the device's SM count as the real planner does (through the runtime), plans nothing.
template <bool MATERIALIZE, typename IdType>
inline cudaError_t PrefillPlanImpl(size_t& float_workspace_size_out, size_t& int_workspace_size_out,
                                   void* float_buffer, size_t float_workspace_size_in_bytes, void* int_buffer,
                                   void* page_locked_int_buffer, size_t int_workspace_size_in_bytes,
                                   PrefillPlanInfo& plan_info, IdType* qo_indptr_h, IdType* kv_indptr_h,
                                   uint32_t total_num_rows, uint32_t batch_size, uint32_t num_qo_heads,
                                   uint32_t num_kv_heads, uint32_t head_dim_qk, uint32_t head_dim_vo,
                                   uint32_t page_size, bool enable_cuda_graph, uint32_t sizeof_dtype_o,
                                   int32_t window_left, int32_t fixed_split_size, bool disable_split_kv,
                                   int64_t num_colocated_ctas, int64_t uniform_q_len, cudaStream_t stream,
                                   uint32_t kv_dtype_bytes = 2) {
  (void)float_buffer, (void)float_workspace_size_in_bytes, (void)int_buffer, (void)page_locked_int_buffer;
  (void)int_workspace_size_in_bytes, (void)qo_indptr_h, (void)kv_indptr_h, (void)total_num_rows;
  (void)batch_size, (void)head_dim_qk, (void)head_dim_vo, (void)page_size, (void)enable_cuda_graph;
  (void)sizeof_dtype_o, (void)window_left, (void)fixed_split_size, (void)disable_split_kv;
  (void)num_colocated_ctas, (void)uniform_q_len, (void)stream, (void)kv_dtype_bytes;
  if (num_kv_heads == 0 || num_qo_heads % num_kv_heads != 0) throw Error("num_qo_heads % num_kv_heads != 0");
  int device = 0, num_sms = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status == cudaSuccess)
    status = cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device);
  float_workspace_size_out = int_workspace_size_out = 0;
  plan_info = PrefillPlanInfo{};
  return status;
}

struct PrefillPlanSM90Info {
  int64_t qo_tile_indices_offset = 0, qo_indptr_offset = 0, kv_indptr_offset = 0, qo_len_offset = 0;
  int64_t kv_len_offset = 0, head_indices_offset = 0, work_indptr_offset = 0, batch_indices_offset = 0;
  bool same_schedule_for_all_heads = false;
};

// Asks the device's SM count as the real planner does, plans nothing.
template <typename IdType>
inline cudaError_t PrefillSM90Plan(void* float_buffer, size_t float_workspace_size_in_bytes, void* int_buffer,
                                   void* page_locked_int_buffer, size_t int_workspace_size_in_bytes,
                                   PrefillPlanSM90Info& plan_info, IdType* qo_indptr_h, IdType* kv_indptr_h,
                                   IdType* kv_len_arr_h, uint32_t total_num_rows, uint32_t batch_size,
                                   uint32_t num_qo_heads, uint32_t num_kv_heads, uint32_t head_dim_qk,
                                   uint32_t head_dim_vo, uint32_t page_size, bool causal,
                                   bool enable_cuda_graph, uint32_t sizeof_dtype_o, cudaStream_t stream) {
  (void)float_buffer, (void)float_workspace_size_in_bytes, (void)int_buffer, (void)page_locked_int_buffer;
  (void)int_workspace_size_in_bytes, (void)qo_indptr_h, (void)kv_indptr_h, (void)kv_len_arr_h;
  (void)total_num_rows, (void)batch_size, (void)head_dim_qk, (void)head_dim_vo, (void)page_size;
  (void)causal, (void)enable_cuda_graph, (void)sizeof_dtype_o, (void)stream;
  if (num_kv_heads == 0 || num_qo_heads % num_kv_heads != 0) throw Error("num_qo_heads % num_kv_heads != 0");
  int device = 0, num_sms = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status == cudaSuccess)
    status = cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device);
  plan_info = PrefillPlanSM90Info{};
  return status;
}

}  // namespace flashinfer
