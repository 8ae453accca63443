// device_memory: exact allocations or a guarded arena, canary fill and the Thrust guard check.
#include "kernels/gpu/device_memory.hpp"

#include <cub/device/device_reduce.cuh>
#include <thrust/device_malloc.h>
#include <thrust/device_free.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/gpu/cuda_try.hpp"

namespace headroom::gpu {
namespace {

constexpr int64_t chunk = 16;  // bytes a thread fills or checks at once

__host__ __device__ inline uint8_t canary_byte(int64_t offset) {
  const uint32_t x = static_cast<uint32_t>(offset) * 0x9E3779B1u;
  return static_cast<uint8_t>((x >> 24) ^ 0xA5u);
}

int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// Sorted payload ranges [start, end) of the arena; a chunk overlaps at most one (bands >= 16 B).
struct payload_table {
  const int64_t* range;  // start0, end0, start1, end1, ...
  int n;
  // Index of the last payload starting at or before `o`, or -1.
  __device__ int find(int64_t o) const {
    int lo = 0, hi = n;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (range[2 * mid] <= o) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }
  __device__ bool in_payload(int64_t o, int p) const {
    return p >= 0 && o >= range[2 * p] && o < range[2 * p + 1];
  }
};

struct fill_canary {
  std::byte* arena;
  int64_t bytes;
  payload_table t;
  __device__ void operator()(int64_t c) const {
    const int64_t o = c * chunk, last = o + chunk - 1 < bytes ? o + chunk - 1 : bytes - 1;
    const int p = t.find(last);
    if (p >= 0 && o >= t.range[2 * p] && last < t.range[2 * p + 1]) return;  // all payload
    for (int64_t b = o; b <= last; ++b)
      if (!t.in_payload(b, t.find(b))) arena[b] = static_cast<std::byte>(canary_byte(b));
  }
};

struct band_stats {
  unsigned long long count;
  long long first, last;  // arena offsets
};

struct band_stats_sum {
  __host__ __device__ band_stats operator()(const band_stats& a, const band_stats& b) const {
    return {a.count + b.count, a.first < b.first ? a.first : b.first, a.last > b.last ? a.last : b.last};
  }
};

constexpr long long no_offset_lo = 0x7FFFFFFFFFFFFFFFLL, no_offset_hi = -1;

// Changed canary bytes in chunk c, restricted to arena bytes [lo, hi).
struct check_chunk {
  const std::byte* arena;
  int64_t lo, hi;
  payload_table t;
  __device__ band_stats operator()(int64_t c) const {
    band_stats s{0, no_offset_lo, no_offset_hi};
    const int64_t o = c * chunk;
    const int64_t b0 = o > lo ? o : lo, b1 = o + chunk < hi ? o + chunk : hi;
    if (b0 >= b1) return s;
    const int p = t.find(b1 - 1);
    if (p >= 0 && b0 >= t.range[2 * p] && b1 <= t.range[2 * p + 1]) return s;  // all payload
    for (int64_t b = b0; b < b1; ++b) {
      if (t.in_payload(b, t.find(b))) continue;
      if (static_cast<uint8_t>(arena[b]) != canary_byte(b)) {
        ++s.count;
        if (b < s.first) s.first = b;
        s.last = b;
      }
    }
    return s;
  }
};

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
    std::vector<int64_t> ranges;
    for (const auto& sl : slots_) ranges.push_back(sl.start), ranges.push_back(sl.end);
    if (!ranges.empty()) {
      table_ = thrust::device_malloc<std::byte>(ranges.size() * sizeof(int64_t)).get();
      HEADROOM_CUDA_TRY(cudaMemcpyAsync(table_, ranges.data(), ranges.size() * sizeof(int64_t),
                                        cudaMemcpyHostToDevice, stream_));
    }
    const payload_table t{reinterpret_cast<const int64_t*>(table_), static_cast<int>(slots_.size())};
    thrust::for_each(thrust::cuda::par.on(stream_), thrust::counting_iterator<int64_t>(0),
                     thrust::counting_iterator<int64_t>(arena_bytes_ / chunk),
                     fill_canary{arena_, arena_bytes_, t});
    for (const auto& sl : slots_) ptrs_.push_back(arena_ + sl.start);
    stats_ = thrust::device_malloc<std::byte>(max_checked_launches * sizeof(band_stats)).get();
    HEADROOM_CUDA_TRY(cub::DeviceReduce::TransformReduce(
        nullptr, temp_bytes_, thrust::counting_iterator<int64_t>(0), reinterpret_cast<band_stats*>(stats_),
        arena_bytes_ / chunk, band_stats_sum{}, check_chunk{arena_, 0, arena_bytes_, t},
        band_stats{0, no_offset_lo, no_offset_hi}, stream_));
    temp_ = thrust::device_malloc<std::byte>(std::max<std::size_t>(temp_bytes_, 1)).get();
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
  for (std::byte* p : {arena_, table_, stats_, temp_})
    if (p) cudaFree(p);
}

void device_memory::check_guards(int32_t launch) {
  if (!arena_) return;
  if (launch < 0 || launch >= max_checked_launches) throw std::invalid_argument("guard check: launch index");
  const payload_table t{reinterpret_cast<const int64_t*>(table_), static_cast<int>(slots_.size())};
  HEADROOM_CUDA_TRY(cub::DeviceReduce::TransformReduce(
      temp_, temp_bytes_, thrust::counting_iterator<int64_t>(0), reinterpret_cast<band_stats*>(stats_) + launch,
      arena_bytes_ / chunk, band_stats_sum{}, check_chunk{arena_, 0, arena_bytes_, t},
      band_stats{0, no_offset_lo, no_offset_hi}, stream_));
  checks_ = std::max(checks_, launch + 1);
}

void device_memory::finish_guards(std::vector<guard_report>& into) {
  if (!arena_ || checks_ <= read_) return;
  std::vector<band_stats> seen(static_cast<std::size_t>(checks_ - read_));
  HEADROOM_CUDA_TRY(cudaMemcpyAsync(seen.data(), reinterpret_cast<band_stats*>(stats_) + read_,
                                    seen.size() * sizeof(band_stats), cudaMemcpyDeviceToHost, stream_));
  HEADROOM_CUDA_TRY(cudaStreamSynchronize(stream_));
  const int32_t base = read_;
  read_ = checks_;
  for (std::size_t k = 0; k < seen.size(); ++k)
    if (seen[k].count > 0) return attribute(base + static_cast<int32_t>(k), into);
}

void device_memory::check_guards(int32_t launch, std::vector<guard_report>& into) {
  check_guards(launch);
  finish_guards(into);
}

// Canary bytes changed: which buffers' bands (Thrust reductions, only on this rare path).
void device_memory::attribute(int32_t launch, std::vector<guard_report>& into) {
  const payload_table t{reinterpret_cast<const int64_t*>(table_), static_cast<int>(slots_.size())};
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const auto id = static_cast<int32_t>(i);
    if (std::any_of(into.begin(), into.end(), [&](const guard_report& r) { return r.buffer == id; })) continue;
    const arena_slot& sl = slots_[i];
    const band_stats s = thrust::transform_reduce(
        thrust::cuda::par.on(stream_), thrust::counting_iterator<int64_t>(sl.before / chunk),
        thrust::counting_iterator<int64_t>((sl.after + chunk - 1) / chunk), check_chunk{arena_, sl.before, sl.after, t},
        band_stats{0, no_offset_lo, no_offset_hi}, band_stats_sum{});
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
