// FlashInfer's batch decode for head size 256 (fi_decode_run.cuh).
#include "targets/engine/flashinfer/fi_decode_run.cuh"

namespace headroom::engine::fi {
HEADROOM_FI_DECODE_HEAD(256)
}  // namespace headroom::engine::fi
