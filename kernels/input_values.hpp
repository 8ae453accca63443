// The attention inputs' values as a pure function of (stream key, element index), the same bits on
// the host and on a device: element e of a stream is one half of splitmix64's output for counter
// e / 2 (the low 32 bits for even e, the high ones for odd e), turned into a magnitude in
// [1/16, 1) with integer arithmetic and one exact conversion, so no compiler's contraction or
// rounding mode can change it. The simulator fills q, K and V element by element from it
// (kernels/inputs.cpp); the GPU campaign fills the same buffers on the device in any order and
// gets the same bytes, so a device finding replays on the simulator.
#pragma once

#include <cstdint>

#include "core/sim/host_device.hpp"
#include "kernels/numeric.hpp"

namespace headroom {

inline constexpr uint64_t golden_gamma = 0x9E3779B97F4A7C15ull;

// splitmix64's output function.
HEADROOM_HOST_DEVICE inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The three value streams of one run's inputs.
enum class value_stream : uint32_t { q = 1, k = 2, v = 3 };

HEADROOM_HOST_DEVICE inline uint64_t stream_key(uint64_t seed, value_stream s) {
  return mix64((seed ^ 0x68656164726F6F6Dull) + static_cast<uint64_t>(s) * golden_gamma);  // "headroom"
}

// 32 random bits as a value: sign from bit 0, magnitude (2^19 + 15 m) / 2^23 for the top 19 bits m
// (an integer below 2^23, so the conversion and the power-of-two scaling are exact).
HEADROOM_HOST_DEVICE inline float value_of_bits(uint32_t bits) {
  const uint32_t m = bits >> 13;
  const float mag = static_cast<float>((1u << 19) + 15u * m) * (1.0f / 8388608.0f);
  return bits & 1u ? mag : -mag;
}

template <class T>
HEADROOM_HOST_DEVICE T input_value(uint64_t key, int64_t e) {
  const uint64_t u = mix64(key + (static_cast<uint64_t>(e) / 2 + 1) * golden_gamma);
  return from_float<T>(value_of_bits(static_cast<uint32_t>(e % 2 ? u >> 32 : u)));
}

// Element e of vLLM's packed cache, rows of 2 x head_size: K's row, then V's row of the same index.
template <class T>
HEADROOM_HOST_DEVICE T packed_kv_value(uint64_t k_key, uint64_t v_key, int64_t head_size, int64_t e) {
  const int64_t row = e / (2 * head_size), j = e % (2 * head_size);
  return j < head_size ? input_value<T>(k_key, row * head_size + j)
                       : input_value<T>(v_key, row * head_size + j - head_size);
}

}  // namespace headroom
