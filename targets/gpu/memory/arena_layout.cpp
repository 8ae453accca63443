// arena_layout.hpp's layout.
#include "targets/gpu/memory/arena_layout.hpp"

#include <algorithm>

namespace headroom::gpu {
namespace {

int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

}  // namespace

std::vector<arena_slot> arena_layout(const std::vector<const wire_buffer*>& bufs, const guard_options& g,
                                     int64_t& arena_bytes) {
  std::vector<arena_slot> slots;
  int64_t pos = 0, largest = 0;  // largest writable payload
  for (const wire_buffer* w : bufs) {
    const wire_buffer& b = *w;
    arena_slot s;
    const int64_t bytes = b.elem_bytes * b.extent;
    if (b.scratch) largest = std::max(largest, bytes);
    s.before = pos;
    s.start = round_up(pos + g.min_band, payload_alignment);
    s.end = s.start + bytes;
    const int64_t after = b.scratch ? std::max(g.min_band, g.after_factor * bytes) : g.min_band;
    s.after = s.end + after;
    s.checked = s.end + std::min(after, std::max(g.min_band, g.max_band));
    pos = s.after;
    slots.push_back(s);
  }
  arena_bytes = round_up(pos + std::min(g.max_tail, g.tail_factor * largest), 16);
  return slots;
}

}  // namespace headroom::gpu
