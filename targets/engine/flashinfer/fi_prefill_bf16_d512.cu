// FlashInfer's batch prefill at head size 512, bf16: the tile heights its planner picks there.
#include "targets/engine/flashinfer/fi_prefill_run.cuh"

namespace headroom::engine::fi {
HEADROOM_FI_PREFILL_TILE(32, 512, nv_bfloat16)
HEADROOM_FI_PREFILL_TILE(16, 512, nv_bfloat16)
}  // namespace headroom::engine::fi
