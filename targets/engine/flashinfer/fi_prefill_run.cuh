// FlashInfer's batch prefill over the paged cache instantiated as vLLM's FlashInfer backend
// instantiates it for a model without RoPE in the kernel, soft cap or ALiBi: BatchPrefillPagedParams
// of one element type for q, kv and o, int32 indices, the NHD layout with explicit strides,
// PosEncodingMode::kNone, fp32 QK accumulation, the causal mask and DefaultAttention with the sliding
// window on (a window_left of -1 masks nothing). The params are set as FlashInfer's own
// BatchPrefillWithPagedKVCacheRun sets them from a plan (csrc/batch_prefill.cu). One head size and
// element type per translation unit (fi_prefill_d*.cu), for the tile heights it is built with.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <exception>

#include "flashinfer/attention/default_prefill_params.cuh"
#include "flashinfer/attention/prefill.cuh"
#include "flashinfer/attention/variants.cuh"
#include "flashinfer/page.cuh"
#include "targets/engine/flashinfer/fi_prefill_run.hpp"

namespace headroom::engine::fi {

template <uint32_t CTA_TILE_Q, uint32_t D, class T>
std::string launch_prefill_tile(const prefill_args& a) {
  using params_t = flashinfer::BatchPrefillPagedParams<T, T, T, int32_t>;
  using variant = flashinfer::DefaultAttention<false, true, false, false>;
  flashinfer::paged_kv_t<T, int32_t> kv(
      a.num_kv_heads, a.page_size, D, a.batch_size, flashinfer::QKVLayout::kNHD, static_cast<T*>(a.k),
      static_cast<T*>(a.v), a.kv_strides, a.indices, a.indptr, a.last_page_len);
  params_t p(static_cast<T*>(a.q), kv, nullptr, a.q_indptr, nullptr, nullptr, static_cast<T*>(a.o), nullptr,
             nullptr, a.num_qo_heads, a.q_stride_n, a.q_stride_h, a.window_left, 0.0f, a.sm_scale, 1.0f,
             1e4f);
  p.request_indices = a.request_indices;
  p.qo_tile_indices = a.qo_tile_indices;
  p.kv_tile_indices = a.kv_tile_indices;
  p.o_indptr = a.o_indptr;
  p.kv_chunk_size_ptr = a.kv_chunk_size;
  p.merge_indptr = a.tmp_v ? a.merge_indptr : nullptr;
  p.block_valid_mask = a.tmp_v ? a.block_valid_mask : nullptr;
  p.padded_batch_size = a.padded;
  p.max_total_num_rows = a.total_num_rows;
  try {
    const cudaError_t e = flashinfer::BatchPrefillWithPagedKVCacheDispatched<
        CTA_TILE_Q, D, D, flashinfer::PosEncodingMode::kNone, /*use_fp16_qk_reduction=*/false,
        flashinfer::MaskMode::kCausal, variant, params_t>(p, static_cast<T*>(a.tmp_v), a.tmp_s,
                                                          /*enable_pdl=*/false, nullptr);
    return e == cudaSuccess ? std::string() : std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  } catch (const std::exception& ex) {
    return ex.what();
  }
}

}  // namespace headroom::engine::fi

// One (tile height, head size) pair's instantiations for element type T (inside namespace
// headroom::engine::fi).
#define HEADROOM_FI_PREFILL_TILE(Q, D, T) \
  template std::string launch_prefill_tile<Q, D, T>(const prefill_args&);
