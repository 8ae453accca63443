// FlashInfer's batch prefill at head size 128, fp16: the tile heights its planner picks there.
#include "targets/engine/flashinfer/fi_prefill_run.cuh"

namespace headroom::engine::fi {
HEADROOM_FI_PREFILL_TILE(128, 128, half)
HEADROOM_FI_PREFILL_TILE(64, 128, half)
HEADROOM_FI_PREFILL_TILE(16, 128, half)
}  // namespace headroom::engine::fi
