// arena_layout.hpp's layout.
#include "targets/gpu/memory/arena_layout.hpp"

#include <algorithm>

namespace headroom::gpu {
namespace {

int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

}  // namespace

std::vector<arena_slot> arena_layout(const std::vector<const wire_buffer*>& bufs, const guard_options& g,
                                     int64_t& arena_bytes, const std::vector<std::size_t>& groups) {
  std::vector<arena_slot> slots;
  int64_t pos = 0, largest = 0;  // largest writable payload (of the group)
  const auto tail = [&] { return std::min(g.max_tail, g.tail_factor * largest); };
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    if (i > 0 && std::find(groups.begin(), groups.end(), i) != groups.end()) {  // the group before ends
      pos += tail();
      largest = 0;
    }
    const wire_buffer& b = *bufs[i];
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
  arena_bytes = round_up(pos + tail(), 16);
  return slots;
}

}  // namespace headroom::gpu
