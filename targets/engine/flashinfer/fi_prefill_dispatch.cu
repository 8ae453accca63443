// fi_prefill_run.hpp: a launch's head size, element type and tile height to its instantiation
// (fi_prefill_*_d*.cu), without FlashInfer's headers in this unit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "targets/engine/flashinfer/fi_prefill_run.hpp"

namespace headroom::engine::fi {

template <uint32_t CTA_TILE_Q, uint32_t D, class T>
std::string launch_prefill_tile(const prefill_args& a);

namespace {

template <uint32_t Q, uint32_t D>
std::string by_type(const prefill_args& a) {
  return a.type == elem::bf16 ? launch_prefill_tile<Q, D, nv_bfloat16>(a)
                              : launch_prefill_tile<Q, D, half>(a);
}

template <uint32_t D>
std::string by_tile(const prefill_args& a) {
  if constexpr (D < 256) {
    if (a.cta_tile_q == 128) return by_type<128, D>(a);
    if (a.cta_tile_q == 64) return by_type<64, D>(a);
  } else if constexpr (D == 256) {
    if (a.cta_tile_q == 64) return by_type<64, D>(a);
  } else {
    if (a.cta_tile_q == 32) return by_type<32, D>(a);
  }
  return by_type<16, D>(a);  // fi_prefill_tile_built was asked first
}

}  // namespace

std::string launch_prefill(const prefill_args& a) {
  if (!fi_prefill_tile_built(a.head_dim, a.cta_tile_q))
    return "no FlashInfer prefill instantiation for head size " + std::to_string(a.head_dim) +
           " and cta_tile_q " + std::to_string(a.cta_tile_q);
  switch (a.head_dim) {
    case 64:
      return by_tile<64>(a);
    case 128:
      return by_tile<128>(a);
    case 256:
      return by_tile<256>(a);
    default:
      return by_tile<512>(a);
  }
}

}  // namespace headroom::engine::fi
