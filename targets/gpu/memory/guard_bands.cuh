// The guard bands of device_memory's guarded arena (device_memory.cu includes this, nothing
// else): the band table, the canary fill, and the check after every launch (check_bands) with the
// per-byte accounting the attribution reuses.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/util/bisect.hpp"
#include "targets/gpu/launch/dependent_launch.cuh"
#include "targets/gpu/memory/canary.hpp"
#include "targets/gpu/memory/device_memory.hpp"

namespace headroom::gpu::bands {

inline constexpr int64_t chunk = 16;  // bytes a thread fills or checks at once

// The guard bands: each buffer's before band and the canary part of its after band, as ranges
// [lo, hi) in arena order, each walked in 16-byte chunks aligned to the arena (a chunk shared with
// a payload is clipped to the band). A fill or check visits band chunks only: its cost follows the
// bands, not the inputs' size. The slack after a canary part is neither filled nor checked.
struct band_range {
  int64_t lo, hi;  // bytes of the band
  int64_t chunk0;  // its first arena chunk (lo / chunk)
  int64_t first;   // index of that chunk among all band chunks
};

// owner[k]: the slot (buffer) band k belongs to.
inline std::vector<band_range> band_ranges(const std::vector<arena_slot>& slots, int64_t& band_chunks,
                                           std::vector<int32_t>& owner) {
  std::vector<band_range> out;
  band_chunks = 0;
  owner.clear();
  auto add = [&](int64_t lo, int64_t hi, std::size_t slot) {
    if (lo >= hi) return;
    const int64_t c0 = lo / chunk, c1 = (hi + chunk - 1) / chunk;
    out.push_back({lo, hi, c0, band_chunks});
    owner.push_back(static_cast<int32_t>(slot));
    band_chunks += c1 - c0;
  };
  for (std::size_t i = 0; i < slots.size();
       ++i) {  // arena order: before band, payload, canary part of the after band
    add(slots[i].before, slots[i].start, i);
    add(slots[i].end, slots[i].checked, i);
  }
  return out;
}

struct band_table {
  const band_range* b;
  int n;
  // Band chunk i (>= 0) -> index of its band (the last one whose first chunk index is <= i; band
  // 0 starts at chunk 0).
  __device__ int index_of(int64_t i) const {
    return last_at_or_below(n, i, [&](int k) { return b[k].first; });
  }
  __device__ const band_range& find(int64_t i) const { return b[index_of(i)]; }
};

// Arena byte offset of band chunk i of band r.
__host__ __device__ inline int64_t chunk_offset(const band_range& r, int64_t i) {
  return (r.chunk0 + i - r.first) * chunk;
}

// The canary over every band chunk (clipped to its band, so a chunk shared with a payload keeps
// the payload's bytes). Block k takes chunks [k * prepare_span, + prepare_span), finds the band of
// its first chunk once and walks forward (a block's chunks span one or two bands); a whole chunk is
// one 16-byte store, a clipped one byte by byte. (The payloads are filled by fill_ops.cuh.)
constexpr int prepare_threads = 256, prepare_per_thread = 8;
constexpr int64_t prepare_span = int64_t{prepare_threads} * prepare_per_thread;

__global__ void __launch_bounds__(prepare_threads)
    prepare_arena(std::byte* arena, band_table t, int64_t band_chunks) {
  __shared__ int first_band;
  const int64_t begin = blockIdx.x * prepare_span;
  if (threadIdx.x == 0) first_band = t.index_of(begin);
  __syncthreads();
  int bi = first_band;
  for (int k = 0; k < prepare_per_thread; ++k) {
    const int64_t i = begin + threadIdx.x + int64_t{k} * prepare_threads;  // increasing in k
    if (i >= band_chunks) return;
    while (bi + 1 < t.n && t.b[bi + 1].first <= i) ++bi;
    const band_range& r = t.b[bi];
    const int64_t o = chunk_offset(r, i);
    if (o >= r.lo && o + chunk <= r.hi) {
      *reinterpret_cast<uint4*>(arena + o) =
          make_uint4(canary_word(o), canary_word(o + 4), canary_word(o + 8), canary_word(o + 12));
    } else {
      const int64_t b0 = o > r.lo ? o : r.lo, b1 = o + chunk < r.hi ? o + chunk : r.hi;
      for (int64_t b = b0; b < b1; ++b) arena[b] = static_cast<std::byte>(canary_byte(b));
    }
  }
}

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

// No changed byte: the identity of band_stats_sum, and a result slot's state while its bands are
// intact.
__host__ __device__ constexpr band_stats no_change() { return {0, no_offset_lo, no_offset_hi}; }

// Changed canary bytes of the 16 bytes w loaded from arena byte o (16-byte aligned), within [lo, hi).
// A word at its canary (the usual case) costs one compare; bytes are counted only in a word that
// changed or that the band clips.
__device__ inline band_stats changed_in(const uint4& w, int64_t o, int64_t lo, int64_t hi) {
  band_stats s = no_change();
  const uint32_t word[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t wo = o + 4 * i;
    const bool whole = wo >= lo && wo + 4 <= hi;
    if (whole && word[i] == canary_word(wo)) continue;
    for (int64_t b = wo > lo ? wo : lo; b < wo + 4 && b < hi; ++b)
      if (static_cast<uint8_t>(word[i] >> (8 * (b - wo))) != canary_byte(b)) {
        ++s.count;
        if (b < s.first) s.first = b;
        s.last = b;
      }
  }
  return s;
}

__device__ inline band_stats changed_bytes(const std::byte* arena, int64_t o, int64_t lo, int64_t hi) {
  if ((o > lo ? o : lo) >= (o + chunk < hi ? o + chunk : hi)) return no_change();
  return changed_in(*reinterpret_cast<const uint4*>(arena + o), o, lo, hi);
}

// Attribution (a rare path): band chunk i -> its band's index (the key) and its changed bytes.
struct band_of_chunk {
  band_table t;
  __device__ int operator()(int64_t i) const { return t.index_of(i); }
};
struct chunk_changes {
  const std::byte* arena;
  band_table t;
  __device__ band_stats operator()(int64_t i) const {
    const band_range& r = t.find(i);
    return changed_bytes(arena, chunk_offset(r, i), r.lo, r.hi);
  }
};

// The check after a launch, one kernel. Block k takes band chunks [k * check_span, + check_span):
// one band lookup per block, then each thread issues its 16-byte loads before comparing any, and
// blocks are small so that a few MiB of bands spread over every SM (latency, not bandwidth, bounds
// a check of a few MiB). Lanes combine with shuffles; only a warp
// that saw a changed byte touches the result (atomics). The result slot starts at
// no_change() and stays there while the bands are intact.
constexpr int check_threads = 256, check_per_thread = 2, check_smem_bands = 128;
constexpr int64_t check_span = check_threads * check_per_thread;

__global__ void __launch_bounds__(check_threads)
    check_bands(const std::byte* arena, band_table t, int64_t n, band_stats* out) {
  allow_dependent_launch();  // the launch after this check may become resident (dependent_launch.cuh)
  // Until wait_for_launch_before(), the launch being checked may still run (device_memory::
  // check_guards launches this early): only the band table (written at set-up) is read, in shared
  // memory when it fits (a request has a few dozen bands), so the walk costs no global round trips;
  // the bands themselves are only prefetched into L2 (which the launch's writes reach too), marked
  // to be evicted last, so that the launch's stream of K and V leaves more of them there (measured:
  // -1.1 us of 69 at 1x32768 for Triton, docs/bench.md).
  __shared__ band_range sb[check_smem_bands];
  __shared__ int first_band;
  band_table st = t;
  if (t.n <= check_smem_bands) {
    for (int i = threadIdx.x; i < t.n; i += check_threads) sb[i] = t.b[i];
    st.b = sb;
  }
  __syncthreads();
  const int64_t begin = blockIdx.x * check_span;
  if (threadIdx.x == 0) first_band = st.index_of(begin);
  __syncthreads();
  int bi = first_band;
  int64_t off[check_per_thread], lo[check_per_thread], hi[check_per_thread];
#pragma unroll
  for (int k = 0; k < check_per_thread; ++k) {
    const int64_t i = begin + threadIdx.x + k * check_threads;  // increasing in k: walk the bands forward
    while (bi + 1 < st.n && st.b[bi + 1].first <= i) ++bi;
    const band_range& r = st.b[bi];
    off[k] = i < n ? chunk_offset(r, i) : -1;
    lo[k] = r.lo, hi[k] = r.hi;
    if (off[k] >= 0) asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(arena + off[k]));
  }
  wait_for_launch_before();
  uint4 w[check_per_thread];
#pragma unroll
  for (int k = 0; k < check_per_thread; ++k)  // from L2 (.cg): no L1 line from before the wait
    if (off[k] >= 0) w[k] = __ldcg(reinterpret_cast<const uint4*>(arena + off[k]));
  const band_stats_sum sum;
  band_stats s = no_change();
#pragma unroll
  for (int k = 0; k < check_per_thread; ++k)
    if (off[k] >= 0) s = sum(s, changed_in(w[k], off[k], lo[k], hi[k]));
  for (int o = 16; o >= 1; o /= 2)
    s = sum(s, band_stats{__shfl_xor_sync(0xFFFFFFFFu, s.count, o), __shfl_xor_sync(0xFFFFFFFFu, s.first, o),
                          __shfl_xor_sync(0xFFFFFFFFu, s.last, o)});
  if ((threadIdx.x & 31) != 0 || s.count == 0) return;
  atomicAdd(&out->count, s.count);
  atomicMin(&out->first, s.first);
  atomicMax(&out->last, s.last);
}

}  // namespace headroom::gpu::bands
