// The arguments of FA3's scheduler preparation (vllm-project/flash-attention hopper/flash_api.cpp,
// mha_fwd_get_scheduler_metadata, then prepare_varlen_num_blocks in flash_prepare_scheduler.cu) for a
// headroom FA3 run: what vLLM's FlashAttention builder passes (batch, max_seqlen_q / max_seqlen_k,
// the schedule's heads and head size, page size, causal with its window, the split count as passed,
// q/k/v element type) and where the buffers are: the persistent scheduler_metadata (the plan's
// capacity), query_start_loc as cu_seqlens_q and seq_lens as seqused_k. The driver derives the
// layout, tile and split count by FA3's own rules and header code (targets/engine/fa3/), refuses a
// launch whose layout differs from the plan's (`expect`), and FA3's kernel writes into the arena.
// A plan prepared in the call (fa3_plan::in_call: vLLM passed no scheduler_metadata) is the layer's
// own call: its metadata buffer is mha_fwd's per-call tensor, and the driver lets FA3's launch
// prepare it (skip_scheduler_metadata_computation off) where the attention call runs.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/backends/fa3.hpp"
#include "targets/engine/engine_arena.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom::engine {

// Empty when the engine target runs the scheduler of plan `p` on FA3's kernel; else why not (the
// driver is built from vLLM's fork: SGLang's sgl-attn layout stays on the simulator).
std::string fa3_unsupported(const fa3_plan& p);

// The request's `engine` JSON for plan `p`: its schedule call and the layout it expects.
std::string fa3_engine_args(const fa3_plan& p);

// Throws std::invalid_argument for a request of another family, without its engine JSON, or with
// malformed params.
nlohmann::json fa3_scheduler_launch(const gpu::gpu_request& rq, const engine_arena& a);

}  // namespace headroom::engine
