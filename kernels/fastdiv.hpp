// Division by a divisor fixed before a launch as a multiply-high, a subtraction, an add and two
// shifts (Granlund and Montgomery's method, the one FlashInfer's uint_fastdiv uses): exact for every
// 32-bit unsigned numerator and divisors 1 .. 2^32 - 1. The multiplier is computed on the host (a
// 64-bit division), so a kernel pays a few instructions a quotient instead of the 32-bit division's
// reciprocal sequence.
#pragma once

#include <cstdint>

#include "core/sim/device_types.hpp"

namespace headroom {

struct fastdiv32 {
  uint32_t d = 0;  // 0: no divisor (divides nothing: usable() is false)
  uint32_t m = 0, s1 = 0, s2 = 0;

  fastdiv32() = default;
  // l = ceil(log2 d), m = floor(2^32 (2^l - d) / d) + 1; s1 = min(l, 1), s2 = max(l - 1, 0).
  explicit fastdiv32(uint32_t divisor) : d(divisor) {
    if (d == 0) return;
    uint32_t l = 0;
    while (l < 32 && (uint64_t{1} << l) < d) ++l;
    m = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << l) - d)) / d + 1);
    s1 = l < 1 ? l : 1;
    s2 = l > 1 ? l - 1 : 0;
  }
  HEADROOM_HOST_DEVICE bool usable() const { return d != 0; }
  HEADROOM_HOST_DEVICE uint32_t div(uint32_t n) const {
    const auto t = static_cast<uint32_t>((uint64_t{n} * m) >> 32);
    return (t + ((n - t) >> s1)) >> s2;
  }
  HEADROOM_HOST_DEVICE uint32_t mod(uint32_t n) const { return n - div(n) * d; }
};

}  // namespace headroom
