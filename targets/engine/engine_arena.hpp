// The guarded arena of an engine-kernel run, built and checked on the host. The layout is the GPU
// worker's (arena_layout: a before band, the payload, an after band per buffer, a tail of slack),
// filled as the worker fills it: inputs with their bytes, scratch with the 0xFF poison and its
// host-written prefix, every band with the canary pattern (canary.hpp). The engine driver receives
// the arena as regions to write, runs the engine's kernel on views into the one allocation and
// sends back the regions asked for: every band, then the downloaded buffers. The bands are judged
// here, so an engine kernel's overrun is reported by the same rules as headroom's bodies'.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "targets/gpu/memory/arena_layout.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom::engine {

struct arena_region {
  int64_t offset = 0, bytes = 0;  // from the arena's first byte
};

struct engine_arena {
  int64_t bytes = 0;                   // the whole arena, slack and tail included
  std::vector<gpu::arena_slot> slots;  // per buffer, in request order
  std::vector<arena_region> fill;      // what the driver writes before the run (the rest: zero)
  std::vector<std::byte> fill_bytes;   // their bytes, concatenated in order
  std::vector<arena_region> readback;  // what it sends back: each buffer's two bands, then downloads
};

// Throws std::invalid_argument for a request whose buffers travel without their bytes (generated
// inputs are the campaign batches' path, which the engine target does not take).
engine_arena make_engine_arena(const gpu::gpu_request& rq);

// The arena byte offset of element `offset` of buffer `id` (-1 for an absent buffer, id < 0). The
// element must lie in the buffer or just past it: a base pointer a launch gives, never an access
// the kernel makes. Throws std::invalid_argument, naming `who`, otherwise.
int64_t arena_offset(const gpu::gpu_request& rq, const engine_arena& a, int32_t id, int64_t offset,
                     const char* who);

// Judges the bytes read back (readback's regions, concatenated): a guard report for each buffer
// whose bands changed, and the downloaded buffers' bytes. Throws std::invalid_argument when `back`
// is not as long as the regions asked for.
void judge_readback(const gpu::gpu_request& rq, const engine_arena& a, const std::vector<std::byte>& back,
                    gpu::run_result& out);

}  // namespace headroom::engine
