// Where each buffer of a guarded run goes in its arena (device_memory.hpp): plain C++, so the
// layout is tested without a device (tests/gpu/test_gpu_host.cpp).
//   [before: min_band][payload, 256-aligned][after: min_band for an input, max(min_band, factor x
//    payload) for a writable buffer, of which the first max_band bytes hold canaries][before of the
//    next] ... [tail: tail_factor x the largest writable buffer, at most max_tail]
#pragma once

#include <cstdint>
#include <vector>

#include "targets/gpu/worker/wire.hpp"

namespace headroom::gpu {

// Payloads start 256-byte aligned, like cudaMalloc's allocations.
inline constexpr int64_t payload_alignment = 256;

struct arena_slot {
  int64_t before = 0;   // first byte of the before band
  int64_t start = 0;    // first payload byte
  int64_t end = 0;      // one past the last payload byte
  int64_t checked = 0;  // one past the canary part of the after band (the rest is slack)
  int64_t after = 0;    // one past the after band
};

// The slots in request order, and the arena's size (tail included, a multiple of 16 bytes: the
// bands are walked in 16-byte chunks). `groups`: the first buffer of each group after the first
// (a campaign batch's cases): every group ends in a tail of its own, so a runaway overrun stays
// in its own case's slack as it would in a run of its own.
std::vector<arena_slot> arena_layout(const std::vector<const wire_buffer*>& bufs, const guard_options& g,
                                     int64_t& arena_bytes, const std::vector<std::size_t>& groups = {});

}  // namespace headroom::gpu
