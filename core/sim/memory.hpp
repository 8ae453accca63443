// The simulator's global memory: named buffers with extents, per-buffer access statistics, and the
// log of everything a launch did wrong (out-of-bounds accesses, uninitialized reads, shared-memory
// races, misuse of the context). Buffers live until the memory is destroyed; several launches of
// one case (e.g. the Triton 3D kernel, then its reduce) share one memory and one log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/sim/device_types.hpp"

namespace headroom::sim {

enum class fill {
  data,     // the host initializes every element (inputs): reads are never "uninitialized"
  scratch,  // poisoned: a read of an element no store has written returns poison (0xFF bytes: NaN
            // for floating point, -1 for integers) and counts as an uninitialized read
};

struct buffer_stats {
  int64_t touched = 0;     // largest element index accessed + 1, out-of-bounds indices included
  int64_t written_to = 0;  // largest element index stored + 1, out-of-bounds indices included
  int64_t bytes_read = 0, bytes_written = 0;
  int64_t loads = 0, stores = 0;  // accesses (a vector access counts once)
  int64_t oob = 0;                // out-of-bounds elements accessed
  int64_t uninitialized = 0;      // reads of never-written scratch elements
};

struct sim_buffer {
  std::string name;
  int64_t elem_bytes = 0;
  int64_t extent = 0;  // elements
  std::byte* data = nullptr;
  bool track_init = false;
  uint8_t* written = nullptr;  // per element, scratch buffers only (owned by the memory)
  int64_t host_prefix = 0;     // scratch: elements [0, host_prefix) were written by the host (upload_prefix)
  buffer_stats stats;
};

// Thread coordinate -1 in every field means block-uniform code (run by every thread of the block).
struct sim_access {
  std::string buffer;
  bool write = false;
  int64_t index = 0, extent = 0;
  int64_t block[3] = {0, 0, 0};
  int64_t thread[3] = {0, 0, 0};
};

enum class hazard_kind { uninitialized_read, read_after_write, write_after_read, write_after_write };
const char* to_string(hazard_kind k);

struct sim_hazard {
  hazard_kind kind = hazard_kind::uninitialized_read;
  std::string buffer;  // "shared:<name>" for shared memory
  int64_t index = 0;   // element index (the first element of the racing granule for shared memory)
  int64_t block[3] = {0, 0, 0};
  int64_t thread[3] = {0, 0, 0};        // the thread doing the access
  int64_t other_thread[3] = {0, 0, 0};  // the other party of a race (-2: several threads)
};

struct sim_log {
  int64_t max_records = 16;  // records kept per kind; counts are always complete
  std::vector<sim_access> oob;
  int64_t oob_count = 0;
  std::vector<sim_hazard> hazards;  // uninitialized reads and races, in the order they happened
  int64_t uninitialized_reads = 0;
  int64_t races = 0;
  int64_t index_overflows = 0;       // ctx.offset32 evaluations that wrapped 32 bits
  std::string first_index_overflow;  // the first one: operands, block and thread
  std::vector<std::string> misuse;   // the body broke a rule of the context (barrier in thread code, ...)
  int64_t misuse_count = 0;
  bool aborted = false;          // a launch stopped early after too many violations
  std::string describe() const;  // a few readable lines
};

// Where a memory's buffers live. `host`: every buffer has storage, as the simulator runs on it.
// `described`: the memory only describes buffers for another device (a GPU worker makes, poisons
// or copies them there): a buffer gets host storage only for the elements the host writes
// (upload: all, upload_prefix: the prefix); alloc'd buffers have none (data is null).
enum class storage { host, described };

class memory {
 public:
  explicit memory(storage s = storage::host) : storage_kind_(s) {}
  ~memory();
  memory(const memory&) = delete;
  memory& operator=(const memory&) = delete;

  // A buffer of `extent` elements. Data buffers start zeroed; scratch buffers read as poison until
  // written. Storage comes from calloc, so pages a run never touches cost nothing: a plan's buffers
  // are allocated at their full capacity however small the run.
  template <class T>
  buffer_ref<T> alloc(const std::string& name, int64_t extent, fill f) {
    sim_buffer& b =
        add(name, static_cast<int64_t>(sizeof(T)), extent, f, storage_kind_ == storage::host ? extent : 0);
    return {reinterpret_cast<T*>(b.data), extent, static_cast<int32_t>(buffers_.size() - 1)};
  }
  template <class T>
  buffer_ref<const T> upload(const std::string& name, const std::vector<T>& src) {
    const auto n = static_cast<int64_t>(src.size());
    sim_buffer& b = add(name, static_cast<int64_t>(sizeof(T)), n, fill::data, n);
    if (!src.empty()) std::memcpy(b.data, src.data(), src.size() * sizeof(T));
    return {reinterpret_cast<const T*>(b.data), n, static_cast<int32_t>(buffers_.size() - 1)};
  }
  // `extent` elements of which the host writes only the first src.size(), as a planner that
  // allocates more work entries than it fills: the rest read as poison and count as uninitialized.
  template <class T>
  buffer_ref<const T> upload_prefix(const std::string& name, const std::vector<T>& src, int64_t extent) {
    const auto n = static_cast<int64_t>(src.size());
    if (n > extent) throw std::invalid_argument("sim buffer '" + name + "': prefix longer than the buffer");
    sim_buffer& b = add(name, static_cast<int64_t>(sizeof(T)), extent, fill::scratch,
                        storage_kind_ == storage::host ? extent : n);
    if (n > 0) {
      std::memcpy(b.data, src.data(), src.size() * sizeof(T));
      if (b.written) std::memset(b.written, 1, static_cast<std::size_t>(n));
    }
    b.host_prefix = n;
    return {reinterpret_cast<const T*>(b.data), extent, static_cast<int32_t>(buffers_.size() - 1)};
  }
  // The buffer's contents as the host would read them back: unwritten scratch elements read as
  // poison (pass false after a native launch, which does not track writes).
  template <class T>
  std::vector<std::remove_const_t<T>> download(buffer_ref<T> r, bool poison_unwritten = true) const {
    std::vector<std::remove_const_t<T>> out(static_cast<std::size_t>(r.extent));
    if (r.extent > 0) std::memcpy(static_cast<void*>(out.data()), r.data, out.size() * sizeof(T));
    const sim_buffer& b = *buffers_.at(static_cast<std::size_t>(r.id));
    if (b.track_init && poison_unwritten)
      for (std::size_t i = 0; i < out.size(); ++i)
        if (!b.written[i]) std::memset(static_cast<void*>(&out[i]), 0xFF, sizeof(T));
    return out;
  }

  sim_buffer& at(int32_t id) { return *buffers_.at(static_cast<std::size_t>(id)); }
  const sim_buffer* find(const std::string& name) const;
  std::size_t size() const { return buffers_.size(); }
  const sim_buffer& operator[](std::size_t i) const { return *buffers_[i]; }

  sim_log log;
  int64_t shared_accesses = 0;  // checked shared-memory accesses of every launch on this memory

 private:
  // `backed`: the elements that get host storage (extent, or fewer in a described memory).
  sim_buffer& add(const std::string& name, int64_t elem_bytes, int64_t extent, fill f, int64_t backed);
  void* zeroed(std::size_t bytes);  // lazily zeroed pages for large sizes
  struct block {
    void* p;
    std::size_t bytes;
    bool mapped;
  };
  std::vector<std::unique_ptr<sim_buffer>> buffers_;
  std::vector<block> storage_;
  storage storage_kind_ = storage::host;
};

}  // namespace headroom::sim
