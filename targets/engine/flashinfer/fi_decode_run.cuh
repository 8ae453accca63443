// FlashInfer's batch decode instantiated as vLLM's FlashInfer backend instantiates it for a
// model without RoPE in the kernel, soft cap or ALiBi: BatchDecodeParams of one element type for
// q, kv and o, int32 indices, the NHD paged layout with explicit strides, PosEncodingMode::kNone,
// DefaultAttention with the sliding window on (a window_left of -1 masks nothing, so one variant
// serves windowed and full layers). One head size per translation unit (fi_decode_d*.cu).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <exception>

#include "flashinfer/attention/decode.cuh"
#include "flashinfer/attention/default_decode_params.cuh"
#include "flashinfer/attention/variants.cuh"
#include "flashinfer/page.cuh"
#include "targets/engine/flashinfer/fi_decode_run.hpp"

namespace headroom::engine::fi {

template <uint32_t D, class T>
std::string launch_decode_typed(const decode_args& a) {
  using params_t = flashinfer::BatchDecodeParams<T, T, T, int32_t>;
  using variant = flashinfer::DefaultAttention<false, true, false, false>;
  flashinfer::paged_kv_t<T, int32_t> kv(
      a.num_kv_heads, a.page_size, D, a.batch_size, flashinfer::QKVLayout::kNHD, static_cast<T*>(a.k),
      static_cast<T*>(a.v), a.kv_strides, a.indices, a.indptr, a.last_page_len);
  params_t p(static_cast<T*>(a.q), nullptr, kv, static_cast<T*>(a.o), nullptr, nullptr, a.num_qo_heads,
             a.q_stride_n, a.q_stride_h, a.window_left, 0.0f, a.sm_scale, 1.0f, 1e4f);
  p.padded_batch_size = a.padded;
  p.request_indices = a.request_indices;
  p.kv_tile_indices = a.kv_tile_indices;
  p.o_indptr = a.o_indptr;
  p.kv_chunk_size_ptr = a.kv_chunk_size;
  p.block_valid_mask = a.block_valid_mask;
  try {
    const cudaError_t e =
        flashinfer::BatchDecodeWithPagedKVCacheDispatched<D, flashinfer::PosEncodingMode::kNone, variant,
                                                          params_t>(p, static_cast<T*>(a.tmp_v), a.tmp_s,
                                                                    /*enable_pdl=*/false, nullptr);
    return e == cudaSuccess ? std::string() : std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  } catch (const std::exception& ex) {
    return ex.what();
  }
}

}  // namespace headroom::engine::fi

// One head size's instantiations, for both element types (inside namespace headroom::engine::fi).
#define HEADROOM_FI_DECODE_HEAD(D)                                              \
  template std::string launch_decode_typed<D, nv_bfloat16>(const decode_args&); \
  template std::string launch_decode_typed<D, half>(const decode_args&);
