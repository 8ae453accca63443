// One run's device buffers, laid out as the request (and so the plan) says. Plain: one exact-size
// allocation per buffer, as production and compute-sanitizer see them. Guarded: one arena in which
// every buffer sits between two guard bands filled with a position-dependent canary (the layout:
// arena_layout.hpp).
// Inputs are uploaded (or made on the device: wire_buffer::gen), scratch (outputs, plan buffers)
// poisoned with 0xFF bytes (NaN / -1), all in one kernel behind one staged upload. The
// arena's allocation (meta in front) is kept per thread from run to run (device_memory.cu).
// check_guards(k) enqueues one reduction kernel over the bands only (never the payloads) after
// launch k, into device memory, with no host synchronisation (it may start while launch k's last
// blocks run and waits for them on the device); finish() reads all of them back with the output
// and, only when canary bytes changed, attributes them per buffer with Thrust reductions.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "targets/gpu/memory/arena_layout.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom::gpu {

class device_memory {
 public:
  // The buffers are read at construction (bytes, sizes) and their sizes afterwards (download), so
  // they must outlive this object; their bytes need not.
  device_memory(const std::vector<wire_buffer>& bufs, bool guarded, const guard_options& g, cudaStream_t s);
  // `groups` (guarded): where each group of buffers after the first starts (arena_layout).
  device_memory(std::vector<const wire_buffer*> bufs, bool guarded, const guard_options& g, cudaStream_t s,
                const std::vector<std::size_t>& groups = {});
  ~device_memory();
  device_memory(const device_memory&) = delete;
  device_memory& operator=(const device_memory&) = delete;

  const std::vector<void*>& pointers() const { return ptrs_; }
  bool guarded() const { return arena_ != nullptr; }
  // check_guards (guarded only): enqueue the check after launch `launch` (< max_checked_launches).
  // finish: read buffer `download_id` back (none if out of range) and, guarded, the checks with
  // the same synchronisation; report the buffers whose bands changed (launch = the first check
  // that saw any change; buffers already in `into` are not reported again); start a new sequence.
  void check_guards(int32_t launch);
  std::vector<std::byte> finish(std::vector<guard_report>& into, int32_t download_id);
  void finish_guards(std::vector<guard_report>& into) { (void)finish(into, -1); }
  static constexpr int max_checked_launches = 8;
  std::vector<std::byte> download(int32_t id) const;

 private:
  cudaStream_t stream_;
  std::vector<wire_buffer const*> bufs_;
  std::vector<void*> ptrs_;        // per buffer id
  std::vector<std::byte*> owned_;  // plain: one allocation per buffer
  std::byte* arena_ = nullptr;     // guarded: in this thread's kept block, after the meta
  int64_t arena_bytes_ = 0;
  std::vector<arena_slot> slots_;
  std::byte* meta_ = nullptr;    // the block's start: one band_stats per checked launch, the band table
  std::size_t block_bytes_ = 0;  // the kept block's size (device_memory.cu)
  int bands_ = 0;
  std::vector<int32_t> band_owner_;  // per band: the buffer it guards
  int64_t band_chunks_ = 0;          // 16-byte chunks the fill and the checks visit
  int32_t checks_ = 0;               // checks enqueued since the last finish_guards()
  std::byte* stage_ = nullptr;       // the staged uploads and fill operations (this thread's kept block)
  std::size_t stage_bytes_ = 0;
  void set_up(bool guarded, const guard_options& g, const std::vector<std::size_t>& groups);
  template <class Upload>
  void fill_buffers(const Upload& upload);
  void release();
  void attribute(int32_t launch, std::vector<guard_report>& into);
};

}  // namespace headroom::gpu
