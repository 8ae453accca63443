// The arguments of vLLM's `unified_attention` (vllm/v1/attention/ops/triton_unified_attention.py)
// for a headroom Triton run: every tensor a view into the guarded arena (its payload's first byte,
// an element offset, a shape and strides), and the scalars. The params of the run (triton_params)
// say where each buffer is and the layer's shape; the request's `engine` JSON adds what vLLM's
// builder passes and the params do not carry (seq_threshold_3D, num_par_softmax_segments: the
// plan's), so vLLM's launcher chooses its 2D or 3D path by its own rule.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "targets/engine/engine_arena.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom::engine {

// vLLM's TritonAttentionBackend.supports_head_size (vllm/v1/attention/backends/triton_attn.py):
// head sizes below this are never given to the kernel, whose tl.dot needs 16-wide tiles.
inline constexpr int64_t vllm_triton_min_head_size = 32;

// Empty when vLLM's Triton backend takes a layer of head size `head_size`; else why not.
std::string vllm_triton_unsupported(int64_t head_size);

// Throws std::invalid_argument for a request of another family or with malformed params.
nlohmann::json vllm_triton_launch(const gpu::gpu_request& rq, const engine_arena& a);

// The request's `engine` JSON for a Triton plan of threshold `thr`.
std::string vllm_triton_engine_args(int64_t thr, int64_t segments);

}  // namespace headroom::engine
