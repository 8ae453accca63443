// Simulator memory: buffer allocation (aligned, poisoned scratch) and the readable log summary.
#include "core/sim/memory.hpp"

#include <cstdint>
#include <cstdlib>
#include <new>
#include <sstream>

#include <sys/mman.h>
#include <stdexcept>

#include "core/util/names.hpp"

namespace headroom::sim {

namespace {
// Buffers are 64-byte aligned so vectorised accesses by a body are aligned as on a GPU.
constexpr std::size_t buffer_alignment = 64;
// Allocations from this size on are anonymous mappings (64 pages of 4 KiB).
constexpr std::size_t mmap_min_bytes = 256 * 1024;
constexpr name_table<hazard_kind, 4> hazard_names = {{{hazard_kind::uninitialized_read, "uninitialized_read"},
                                                      {hazard_kind::read_after_write, "read_after_write"},
                                                      {hazard_kind::write_after_read, "write_after_read"},
                                                      {hazard_kind::write_after_write, "write_after_write"}}};
}  // namespace

const char* to_string(hazard_kind k) { return name_in(hazard_names, k); }

memory::~memory() {
  for (const block& b : storage_) {
    if (b.mapped)
      munmap(b.p, b.bytes);
    else
      std::free(b.p);
  }
}

// calloc alone is not enough: glibc raises its mmap threshold after the first large free, and
// then calloc memsets the whole plan buffer every case. Anonymous mappings are zero-filled pages
// the kernel provides on first touch, so untouched capacity costs nothing.
void* memory::zeroed(std::size_t bytes) {
  if (bytes >= mmap_min_bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    storage_.push_back({p, bytes, true});
    return p;
  }
  void* p = std::calloc(bytes, 1);
  if (!p) throw std::bad_alloc();
  storage_.push_back({p, bytes, false});
  return p;
}

sim_buffer& memory::add(const std::string& name, int64_t elem_bytes, int64_t extent, fill f, int64_t backed) {
  if (extent < 0) throw std::invalid_argument("sim buffer '" + name + "': negative extent");
  auto b = std::make_unique<sim_buffer>();
  b->name = name;
  b->elem_bytes = elem_bytes;
  b->extent = extent;
  b->track_init = f == fill::scratch;
  if (backed > 0 || storage_kind_ == storage::host) {
    const std::size_t bytes = static_cast<std::size_t>(backed) * static_cast<std::size_t>(elem_bytes);
    const auto addr = reinterpret_cast<std::uintptr_t>(zeroed(bytes + buffer_alignment));
    b->data =
        reinterpret_cast<std::byte*>((addr + buffer_alignment - 1) / buffer_alignment * buffer_alignment);
  }
  if (b->track_init && storage_kind_ == storage::host)
    b->written = static_cast<uint8_t*>(zeroed(static_cast<std::size_t>(extent) + 1));
  buffers_.push_back(std::move(b));
  return *buffers_.back();
}

const sim_buffer* memory::find(const std::string& name) const {
  for (const auto& b : buffers_)
    if (b->name == name) return b.get();
  return nullptr;
}

std::string sim_log::describe() const {
  std::ostringstream os;
  auto xyz = [&](const int64_t* v) { os << "(" << v[0] << "," << v[1] << "," << v[2] << ")"; };
  os << oob_count << " out-of-bounds, " << uninitialized_reads << " uninitialized reads, " << races
     << " races, " << misuse_count << " misuse, " << index_overflows << " index overflows"
     << (aborted ? " (aborted)" : "") << "\n";
  if (index_overflows > 0) os << "  index overflow: " << first_index_overflow << "\n";
  for (const auto& a : oob) {
    os << "  " << (a.write ? "write" : "read") << " " << a.buffer << "[" << a.index << "] extent " << a.extent
       << " block ";
    xyz(a.block);
    os << " thread ";
    xyz(a.thread);
    os << "\n";
  }
  for (const auto& h : hazards) {
    os << "  " << to_string(h.kind) << " " << h.buffer << "[" << h.index << "] block ";
    xyz(h.block);
    os << " thread ";
    xyz(h.thread);
    if (h.kind != hazard_kind::uninitialized_read) {
      os << " other ";
      xyz(h.other_thread);
    }
    os << "\n";
  }
  for (const auto& m : misuse) os << "  misuse: " << m << "\n";
  return os.str();
}

}  // namespace headroom::sim
