// device_memory: exact allocations or a guarded arena (its bands: guard_bands.cuh), uploads, poison.
#include "kernels/gpu/device_memory.hpp"

#include <thrust/device_malloc.h>
#include <thrust/device_free.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/gpu/cuda_try.hpp"
#include "kernels/gpu/guard_bands.cuh"

namespace headroom::gpu {

using namespace bands;

namespace {

int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// The band table sits after the check results in the meta allocation.
band_table table_in(const std::byte* meta, int n_bands) {
  return {reinterpret_cast<const band_range*>(meta + device_memory::max_checked_launches * sizeof(band_stats)), n_bands};
}

}  // namespace

std::vector<arena_slot> arena_layout(const std::vector<wire_buffer>& bufs, const guard_options& g,
                                     int64_t& arena_bytes) {
  std::vector<arena_slot> slots;
  int64_t pos = 0;
  for (const auto& b : bufs) {
    arena_slot s;
    const int64_t bytes = b.elem_bytes * b.extent;
    s.before = pos;
    s.start = round_up(pos + g.min_band, payload_alignment);
    s.end = s.start + bytes;
    const int64_t after = b.scratch ? std::max(g.min_band, g.after_factor * bytes) : g.min_band;
    s.after = s.end + after;
    s.checked = s.end + std::min(after, std::max(g.min_band, g.max_band));
    pos = s.after;
    slots.push_back(s);
  }
  arena_bytes = round_up(pos, chunk);
  return slots;
}

device_memory::device_memory(const std::vector<wire_buffer>& bufs, bool guarded,
                             const guard_options& g, cudaStream_t s)
    : stream_(s) {
  for (const auto& b : bufs) {
    if (b.elem_bytes <= 0 || b.extent < 0) throw std::invalid_argument("gpu buffer " + b.name + ": bad size");
    if (!b.scratch && static_cast<int64_t>(b.data.size()) != b.elem_bytes * b.extent)
      throw std::invalid_argument("gpu buffer " + b.name + ": data size does not match its extent");
    bufs_.push_back(&b);
  }
  if (guarded) {
    slots_ = arena_layout(bufs, g, arena_bytes_);
    arena_ = thrust::device_malloc<std::byte>(static_cast<std::size_t>(arena_bytes_)).get();
    const auto bands = band_ranges(slots_, band_chunks_);
    bands_ = static_cast<int>(bands.size());
    // One allocation for the check results (first) and the band table, initialised in one copy.
    std::vector<std::byte> meta(max_checked_launches * sizeof(band_stats) + bands.size() * sizeof(band_range));
    const band_stats clean{0, no_offset_lo, no_offset_hi};
    for (int k = 0; k < max_checked_launches; ++k) std::memcpy(meta.data() + k * sizeof(band_stats), &clean, sizeof(clean));
    if (!bands.empty())
      std::memcpy(meta.data() + max_checked_launches * sizeof(band_stats), bands.data(), bands.size() * sizeof(band_range));
    meta_ = thrust::device_malloc<std::byte>(meta.size()).get();
    HEADROOM_CUDA_TRY(cudaMemcpyAsync(meta_, meta.data(), meta.size(), cudaMemcpyHostToDevice, stream_));
    const band_table t = table_in(meta_, bands_);
    if (band_chunks_ > 0)
      thrust::for_each(thrust::cuda::par.on(stream_), thrust::counting_iterator<int64_t>(0),
                       thrust::counting_iterator<int64_t>(band_chunks_), fill_canary{arena_, t});
    for (const auto& sl : slots_) ptrs_.push_back(arena_ + sl.start);
  } else {
    for (const auto& b : bufs) {
      const auto bytes = static_cast<std::size_t>(b.elem_bytes * b.extent);
      std::byte* p = bytes ? thrust::device_malloc<std::byte>(bytes).get() : nullptr;
      owned_.push_back(p);
      ptrs_.push_back(p);
    }
  }
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    const auto bytes = static_cast<std::size_t>(bufs[i].elem_bytes * bufs[i].extent);
    if (bytes == 0) continue;
    if (bufs[i].scratch)
      HEADROOM_CUDA_TRY(cudaMemsetAsync(ptrs_[i], 0xFF, bytes, stream_));
    else
      HEADROOM_CUDA_TRY(cudaMemcpyAsync(ptrs_[i], bufs[i].data.data(), bytes, cudaMemcpyHostToDevice, stream_));
  }
}

device_memory::~device_memory() {
  // Frees are not checked: after a lost context they fail, and the worker exits anyway.
  for (std::byte* p : owned_)
    if (p) cudaFree(p);
  for (std::byte* p : {arena_, meta_})
    if (p) cudaFree(p);
}

void device_memory::check_guards(int32_t launch) {
  if (!arena_) return;
  if (launch < 0 || launch >= max_checked_launches) throw std::invalid_argument("guard check: launch index");
  if (band_chunks_ > 0) {
    const int64_t blocks = (band_chunks_ + check_span - 1) / check_span;
    check_bands<<<static_cast<unsigned>(blocks), check_threads, 0, stream_>>>(
        arena_, table_in(meta_, bands_), band_chunks_, reinterpret_cast<band_stats*>(meta_) + launch);
    HEADROOM_CUDA_TRY(cudaGetLastError());
  }
  checks_ = std::max(checks_, launch + 1);
}

void device_memory::finish_guards(std::vector<guard_report>& into) {
  if (!arena_ || checks_ == 0) return;
  std::vector<band_stats> seen(static_cast<std::size_t>(checks_));
  checks_ = 0;  // the next check starts a new sequence of launches
  HEADROOM_CUDA_TRY(cudaMemcpyAsync(seen.data(), meta_, seen.size() * sizeof(band_stats), cudaMemcpyDeviceToHost,
                                    stream_));
  HEADROOM_CUDA_TRY(cudaStreamSynchronize(stream_));
  const auto dirty = std::find_if(seen.begin(), seen.end(), [](const band_stats& b) { return b.count > 0; });
  if (dirty == seen.end()) return;  // the usual case: every result slot is still clean
  attribute(static_cast<int32_t>(dirty - seen.begin()), into);
  const band_stats clean{0, no_offset_lo, no_offset_hi};
  std::fill(seen.begin(), seen.end(), clean);  // clean slots for the next sequence
  HEADROOM_CUDA_TRY(cudaMemcpyAsync(meta_, seen.data(), seen.size() * sizeof(band_stats), cudaMemcpyHostToDevice,
                                    stream_));
  HEADROOM_CUDA_TRY(cudaStreamSynchronize(stream_));
}

// Canary bytes changed: which buffers' bands (Thrust reductions, only on this rare path). A buffer
// owns its before band [before, start) and its after band [end, after).
void device_memory::attribute(int32_t launch, std::vector<guard_report>& into) {
  const auto changed = [&](int64_t lo, int64_t hi) {
    if (lo >= hi) return band_stats{0, no_offset_lo, no_offset_hi};
    return thrust::transform_reduce(thrust::cuda::par.on(stream_), thrust::counting_iterator<int64_t>(lo / chunk),
                                    thrust::counting_iterator<int64_t>((hi + chunk - 1) / chunk),
                                    check_range_chunk{arena_, lo, hi}, band_stats{0, no_offset_lo, no_offset_hi},
                                    band_stats_sum{});
  };
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const auto id = static_cast<int32_t>(i);
    if (std::any_of(into.begin(), into.end(), [&](const guard_report& r) { return r.buffer == id; })) continue;
    const arena_slot& sl = slots_[i];
    const band_stats s = band_stats_sum{}(changed(sl.before, sl.start), changed(sl.end, sl.checked));
    if (s.count > 0)
      into.push_back({id, launch, static_cast<int64_t>(s.count), s.first - sl.start, s.last - sl.start});
  }
}

std::vector<std::byte> device_memory::download(int32_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= bufs_.size()) return {};
  std::vector<std::byte> out(static_cast<std::size_t>(bufs_[id]->elem_bytes * bufs_[id]->extent));
  if (!out.empty()) {
    HEADROOM_CUDA_TRY(cudaMemcpyAsync(out.data(), ptrs_[id], out.size(), cudaMemcpyDeviceToHost, stream_));
    HEADROOM_CUDA_TRY(cudaStreamSynchronize(stream_));
  }
  return out;
}

}  // namespace headroom::gpu
