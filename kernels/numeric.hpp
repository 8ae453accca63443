// Element types and math the kernel bodies share with the host: bf16 and fp16 as 16-bit patterns
// with exact round-to-nearest-even conversions (bit manipulation: identical on host and device),
// and the few float functions the bodies call.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/sim/host_device.hpp"

namespace headroom {

struct bf16 {
  uint16_t bits;
};
struct fp16 {
  uint16_t bits;
};

HEADROOM_HOST_DEVICE inline uint32_t float_bits(float f) {
#if HEADROOM_ON_DEVICE
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
#endif
}

HEADROOM_HOST_DEVICE inline float bits_float(uint32_t u) {
#if HEADROOM_ON_DEVICE
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
#endif
}

HEADROOM_HOST_DEVICE inline float to_float(float x) { return x; }
HEADROOM_HOST_DEVICE inline float to_float(bf16 x) { return bits_float(static_cast<uint32_t>(x.bits) << 16); }

HEADROOM_HOST_DEVICE inline float to_float(fp16 x) {
  const uint32_t sign = static_cast<uint32_t>(x.bits & 0x8000u) << 16;
  const uint32_t e = (x.bits >> 10) & 0x1Fu, m = x.bits & 0x3FFu;
  if (e == 0) {  // zero or subnormal: m * 2^-24, exact in float
    const float v = static_cast<float>(m) * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  if (e == 31) return bits_float(sign | 0x7F800000u | (m << 13));  // inf / nan
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));        // rebias 15 -> 127
}

template <class T>
HEADROOM_HOST_DEVICE T from_float(float f);

template <>
HEADROOM_HOST_DEVICE inline float from_float<float>(float f) {
  return f;
}

template <>
HEADROOM_HOST_DEVICE inline bf16 from_float<bf16>(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return {static_cast<uint16_t>((u >> 16) | 0x40u)};  // quiet nan
  return {static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16)};
}

template <>
HEADROOM_HOST_DEVICE inline fp16 from_float<fp16>(float f) {
  uint32_t x = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7FFFFFFFu;
  if (x >= 0x7F800000u) return {static_cast<uint16_t>(sign | (x > 0x7F800000u ? 0x7E00u : 0x7C00u))};
  if (x >= 0x477FF000u) return {static_cast<uint16_t>(sign | 0x7C00u)};  // >= 65520 rounds to inf
  if (x < 0x38800000u) {                                                 // below 2^-14: subnormal
    if (x <= 0x33000000u) return {sign};                                 // <= 2^-25 rounds to 0
    const uint32_t mant = (x & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - (x >> 23);
    uint32_t r = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return {static_cast<uint16_t>(sign | r)};
  }
  const uint32_t r = x - 0x38000000u;  // rebias 127 -> 15
  return {static_cast<uint16_t>(sign | ((r + 0xFFFu + ((r >> 13) & 1u)) >> 13))};
}

HEADROOM_HOST_DEVICE inline float fast_exp(float x) {
#if HEADROOM_ON_DEVICE
  return __expf(x);
#else
  return std::exp(x);
#endif
}

// 2^x: one ex2.approx on a GPU (results below 2^-126 flush to 0, as a softmax may).
HEADROOM_HOST_DEVICE inline float fast_exp2(float x) {
#if HEADROOM_ON_DEVICE
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return std::exp2(x);
#endif
}

// a * b + c, fused on a GPU (one FFMA); the host rounds twice, within every tolerance.
HEADROOM_HOST_DEVICE inline float fmadd(float a, float b, float c) {
#if HEADROOM_ON_DEVICE
  return __fmaf_rn(a, b, c);
#else
  return a * b + c;
#endif
}

HEADROOM_HOST_DEVICE inline float log_f(float x) {
#if HEADROOM_ON_DEVICE
  return __logf(x);
#else
  return std::log(x);
#endif
}

HEADROOM_HOST_DEVICE inline float max_f(float a, float b) { return a > b ? a : b; }
// IEEE maxNum (a NaN loses), one FMNMX on a GPU: the lane_max of the contexts rounds the same way.
HEADROOM_HOST_DEVICE inline float fmax_f(float a, float b) {
#if HEADROOM_ON_DEVICE
  return fmaxf(a, b);
#else
  return std::fmax(a, b);
#endif
}

// -inf as the running maximum of an empty softmax.
HEADROOM_HOST_DEVICE inline float neg_inf() { return -INFINITY; }

}  // namespace headroom
