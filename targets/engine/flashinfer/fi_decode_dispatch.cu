// fi_decode_run.hpp: the head size and element type of a launch to its instantiation
// (fi_decode_d*.cu), without FlashInfer's headers in this unit; the timing spin.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "targets/engine/flashinfer/fi_decode_run.hpp"

namespace headroom::engine::fi {

template <uint32_t D, class T>
std::string launch_decode_typed(const decode_args& a);

namespace {
template <uint32_t D>
std::string by_type(const decode_args& a) {
  return a.type == elem::bf16 ? launch_decode_typed<D, nv_bfloat16>(a) : launch_decode_typed<D, half>(a);
}
}  // namespace

std::string launch_decode(const decode_args& a) {
  switch (a.head_dim) {
    case 64:
      return by_type<64>(a);
    case 128:
      return by_type<128>(a);
    case 256:
      return by_type<256>(a);
    case 512:
      return by_type<512>(a);
    default:
      return "no FlashInfer decode instantiation for head size " + std::to_string(a.head_dim);
  }
}

}  // namespace headroom::engine::fi
