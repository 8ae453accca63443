// The tile heights headroom_flashinfer_driver's prefill is built with, per head size: those
// FlashInfer's FA2DetermineCtaTileQ picks (128 / 64 / 16 below head size 256, 64 / 16 at 256,
// 32 / 16 at 512). Shared by the launch (a plan with another tile is refused before it travels) and
// the driver's dispatch.
#pragma once

#include <cstdint>

namespace headroom::engine {

constexpr bool fi_prefill_tile_built(int64_t head_size, int64_t cta_tile_q) {
  switch (head_size) {
    case 64:
    case 128:
      return cta_tile_q == 128 || cta_tile_q == 64 || cta_tile_q == 16;
    case 256:
      return cta_tile_q == 64 || cta_tile_q == 16;
    case 512:
      return cta_tile_q == 32 || cta_tile_q == 16;
    default:
      return false;
  }
}

}  // namespace headroom::engine
