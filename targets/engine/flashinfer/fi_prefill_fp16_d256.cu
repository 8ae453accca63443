// FlashInfer's batch prefill at head size 256, fp16: the tile heights its planner picks there.
#include "targets/engine/flashinfer/fi_prefill_run.cuh"

namespace headroom::engine::fi {
HEADROOM_FI_PREFILL_TILE(64, 256, half)
HEADROOM_FI_PREFILL_TILE(16, 256, half)
}  // namespace headroom::engine::fi
