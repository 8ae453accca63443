// FlashInfer's batch prefill at head size 512, fp16: the tile heights its planner picks there.
#include "targets/engine/flashinfer/fi_prefill_run.cuh"

namespace headroom::engine::fi {
HEADROOM_FI_PREFILL_TILE(32, 512, half)
HEADROOM_FI_PREFILL_TILE(16, 512, half)
}  // namespace headroom::engine::fi
