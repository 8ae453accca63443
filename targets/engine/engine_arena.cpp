// engine_arena.hpp: the host image of a guarded arena and the check of its bands.
#include "targets/engine/engine_arena.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/inputs.hpp"
#include "targets/gpu/memory/canary.hpp"

namespace headroom::engine {
namespace {

// The engine target's input cap (kernels/inputs.hpp) leaves half a frame to the plan's scratch and
// the bands: q, K, V and the output at the cap in fp32 fill at most half of the largest message.
static_assert(4 * max_engine_input_elems * int64_t{sizeof(float)} <= int64_t{gpu::max_message_bytes / 2});

void add_canaries(engine_arena& a, int64_t from, int64_t to) {
  if (to <= from) return;
  a.fill.push_back({from, to - from});
  for (int64_t b = from; b < to; ++b) a.fill_bytes.push_back(static_cast<std::byte>(gpu::canary_byte(b)));
}

// The changed canary bytes of band [from, to), whose bytes start at `at` in `back`, folded into g
// (offsets from the payload's first byte).
void check_band(const std::vector<std::byte>& back, std::size_t at, int64_t from, int64_t to, int64_t start,
                gpu::guard_report& g) {
  for (int64_t b = from; b < to; ++b) {
    if (back[at + static_cast<std::size_t>(b - from)] == static_cast<std::byte>(gpu::canary_byte(b)))
      continue;
    const int64_t rel = b - start;
    if (g.corrupted_bytes == 0) g.first = rel;
    g.last = rel;
    ++g.corrupted_bytes;
  }
}

}  // namespace

int64_t arena_offset(const gpu::gpu_request& rq, const engine_arena& a, int32_t id, int64_t offset,
                     const char* who) {
  if (id < 0) return -1;
  if (static_cast<std::size_t>(id) >= rq.buffers.size())
    throw std::invalid_argument(std::string(who) + ": buffer id " + std::to_string(id) + " out of range");
  const auto& b = rq.buffers[static_cast<std::size_t>(id)];
  if (offset < 0 || offset > b.extent)
    throw std::invalid_argument(std::string(who) + ": a base of " + b.name + " outside it");
  return a.slots[static_cast<std::size_t>(id)].start + offset * b.elem_bytes;
}

engine_arena make_engine_arena(const gpu::gpu_request& rq) {
  engine_arena a;
  std::vector<const gpu::wire_buffer*> bufs;
  for (const auto& b : rq.buffers) bufs.push_back(&b);
  a.slots = gpu::arena_layout(bufs, rq.guards, a.bytes);
  for (std::size_t i = 0; i < rq.buffers.size(); ++i) {
    const auto& b = rq.buffers[i];
    const auto& s = a.slots[i];
    if (b.gen != gpu::value_gen::none)
      throw std::invalid_argument("engine arena: buffer " + b.name + " has generated values");
    const int64_t payload = s.end - s.start;
    if (!b.scratch && static_cast<int64_t>(b.data.size()) != payload)
      throw std::invalid_argument("engine arena: input " + b.name + " carries " +
                                  std::to_string(b.data.size()) + " bytes for a " + std::to_string(payload) +
                                  "-byte buffer");
    add_canaries(a, s.before, s.start);
    a.fill.push_back({s.start, payload});
    if (b.scratch) {  // the host-written prefix over the poison
      const std::size_t prefix = std::min(b.data.size(), static_cast<std::size_t>(payload));
      a.fill_bytes.insert(a.fill_bytes.end(), b.data.begin(),
                          b.data.begin() + static_cast<std::ptrdiff_t>(prefix));
      a.fill_bytes.insert(a.fill_bytes.end(), static_cast<std::size_t>(payload) - prefix, std::byte{0xFF});
    } else {
      a.fill_bytes.insert(a.fill_bytes.end(), b.data.begin(), b.data.end());
    }
    add_canaries(a, s.end, s.checked);
  }
  for (const auto& s : a.slots)
    a.readback.push_back({s.before, s.start - s.before}), a.readback.push_back({s.end, s.checked - s.end});
  for (const int32_t id : {rq.download, rq.download_states})
    if (id >= 0 && static_cast<std::size_t>(id) < a.slots.size())
      a.readback.push_back({a.slots[id].start, a.slots[id].end - a.slots[id].start});
  return a;
}

void judge_readback(const gpu::gpu_request& rq, const engine_arena& a, const std::vector<std::byte>& back,
                    gpu::run_result& out) {
  int64_t want = 0;
  for (const auto& r : a.readback) want += r.bytes;
  if (static_cast<int64_t>(back.size()) != want)
    throw std::invalid_argument("engine arena: " + std::to_string(back.size()) + " bytes came back, " +
                                std::to_string(want) + " asked for");
  std::size_t at = 0;
  for (std::size_t i = 0; i < a.slots.size(); ++i) {
    const auto& s = a.slots[i];
    gpu::guard_report g;
    g.buffer = static_cast<int32_t>(i);
    check_band(back, at, s.before, s.start, s.start, g);
    at += static_cast<std::size_t>(s.start - s.before);
    check_band(back, at, s.end, s.checked, s.start, g);
    at += static_cast<std::size_t>(s.checked - s.end);
    if (g.corrupted_bytes > 0) out.guards.push_back(g);
  }
  for (const int32_t id : {rq.download, rq.download_states}) {
    if (id < 0 || static_cast<std::size_t>(id) >= a.slots.size()) continue;
    const auto n = static_cast<std::size_t>(a.slots[id].end - a.slots[id].start);
    auto& dst = id == rq.download ? out.output : out.states;
    dst.assign(back.begin() + static_cast<std::ptrdiff_t>(at),
               back.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
  }
}

}  // namespace headroom::engine
