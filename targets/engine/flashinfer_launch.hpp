// The arguments of FlashInfer's BatchDecodeWithPagedKVCacheDispatched (include/flashinfer/attention/
// decode.cuh: the CUDA-core decode kernel, then VariableLengthMergeStates when the plan splits the
// kv) for a headroom FlashInfer decode run, and of BatchPrefillWithPagedKVCacheDispatched
// (prefill.cuh: the prefill kernel, which also serves tensor-core decode, then the merge) for a
// prefill run, as the engine driver's launch JSON. Every pointer is a
// byte offset into the guarded arena: q, the paged K and V with the layout's strides, the output,
// tmp_v / tmp_s (the plan's buffers, whole) and the plan's index arrays. The page table FlashInfer
// reads (indptr, indices, last_page_len) is derived from the run's block table and sequence lengths,
// as vLLM's FlashInfer metadata builder derives it; the driver allocates it exactly sized.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "targets/engine/engine_arena.hpp"
#include "targets/engine/flashinfer/fi_prefill_tiles.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom::engine {

// Head sizes the driver instantiates: FlashInfer's own list (DISPATCH_HEAD_DIM, utils.cuh; vLLM's
// FlashInfer backend refuses any other). GQA groups: those FlashInfer's CUDA-core decode dispatches
// (DISPATCH_GQA_GROUP_SIZE; its plan and its launch raise for any other, 12 and 16 included). A
// decode outside them has no FlashInfer kernel and stays on the simulator (docs/engine-kernels.md).
inline constexpr int64_t fi_engine_head_sizes[] = {64, 128, 256, 512};
inline constexpr int64_t fi_engine_groups[] = {1, 2, 3, 4, 6, 8};

// Empty when FlashInfer's decode (prefill: `prefill`) kernel runs a layer of `heads` query heads,
// `kv_heads` KV heads, head size `head_size` and element type `type` (bf16 or fp16); else why not.
// The prefill kernel takes any whole group (it divides by the group at run time); decode
// dispatches a fixed list of groups.
std::string flashinfer_unsupported(int64_t heads, int64_t kv_heads, int64_t head_size, gpu::elem_type type,
                                   bool prefill);

// Throw std::invalid_argument for a request of another family, unsupported geometry or malformed
// params.
nlohmann::json flashinfer_decode_launch(const gpu::gpu_request& rq, const engine_arena& a);
nlohmann::json flashinfer_prefill_launch(const gpu::gpu_request& rq, const engine_arena& a);

}  // namespace headroom::engine
