// FA3's attention call on the engine target: beside the scheduler's preparation (fa3_launch.hpp),
// the layer's own attention call as vLLM's FlashAttentionImpl makes it on the metadata just
// scheduled, so that FA3's forward kernel (and its split combine) read that metadata in the guarded
// arena. The call's tensors join the request: q, the paged K and V caches (separate, or vLLM's packed
// cache with K and V as strided views of one buffer; a DiffKV layer's packed cache of d + dv to a
// row, V its first dv values) and the page table as inputs (the values of kernels/inputs.hpp), the
// output (head size v to a head) and softmax_lse as scratch, and when the
// call splits, out_accum and softmax_lse_accum at the sizes mha_fwd allocates for its own split
// count, so a tile that writes a split past them lands in their after bands. The output is
// downloaded and held to the fp32 reference, so rows FA3 never computes show as output elements
// never written.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backends/fa3.hpp"
#include "core/check/executor.hpp"
#include "targets/engine/engine_arena.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom::engine {

// Empty when the FA3 driver's kernels run the attention call of `r` (whose plan is `p`): vLLM's
// fork, a bf16 layer of a head size FA3 runs (at most 256, a multiple of 8) with head size v = head
// size or 192 / 128, metadata of the length mha_fwd expects, and inputs within the engine target's
// cap; else why not (the scheduler alone then runs).
std::string fa3_attention_unsupported(const run_request& r, const fa3_plan& p);

// Adds the attention call to rq (whose engine JSON fa3_engine_args made): its tensors, the
// call's values under "fa3"."attention", the output as the download; and the fp32 reference of the
// output into `reference`. Returns the head size of the output's rows (the layer's head size v).
// Does nothing and returns the layer's head size when fa3_attention_unsupported(r, p) is not empty.
int64_t fa3_attach_attention(const run_request& r, const fa3_plan& p, gpu::gpu_request& rq,
                             std::vector<float>& reference);

// The launch's "attention" object: the call's values with its tensors' arena offsets (an absent
// tensor -1). Throws std::invalid_argument for a tensor id outside the request.
nlohmann::json fa3_attention_launch(const nlohmann::json& attention, const gpu::gpu_request& rq,
                                    const engine_arena& a);

}  // namespace headroom::engine
