// The canary pattern of the guard bands, shared by the device's fill and check (guard_bands.cuh)
// and the host's (the engine target builds its arena image and checks its bands on the host).
#pragma once

#include <cstdint>

#include "core/sim/host_device.hpp"

namespace headroom::gpu {

// A position-dependent word per 4-byte-aligned word of the arena (one multiply per word to check),
// so a shifted or replayed copy of a band never matches; a byte's canary is its byte of that word
// (little-endian).
HEADROOM_HOST_DEVICE inline uint32_t canary_word(int64_t word_offset) {  // word_offset % 4 == 0
  return (static_cast<uint32_t>(word_offset >> 2) * 0x9E3779B1u) ^ 0xA5A5A5A5u;
}
HEADROOM_HOST_DEVICE inline uint8_t canary_byte(int64_t offset) {
  return static_cast<uint8_t>(canary_word(offset & ~int64_t{3}) >> (8 * (offset & 3)));
}

}  // namespace headroom::gpu
