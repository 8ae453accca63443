// Checked views of the simulator: every load and store through them is bounds-checked against the
// buffer's extent (violations are recorded with buffer, index, extent, block and thread, the access
// is dropped or returns poison, and the launch goes on), counted per buffer (touched, bytes), and
// checked for uninitialized reads. Shared views also check barrier discipline (see sim_context.hpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/sim/device_types.hpp"
#include "core/sim/memory.hpp"

namespace headroom::sim {

class sim_context;

// All bytes 0xFF: NaN for bf16 / fp16 / fp32, -1 for signed integers.
template <class T>
T poison() {
  T t;
  std::memset(static_cast<void*>(&t), 0xFF, sizeof(T));
  return t;
}

// Shared-memory bookkeeping tag: epoch in the high 32 bits, thread id in the low 32.
inline constexpr uint32_t uniform_tid = 0xFFFFFFFEu;  // block-uniform code: every thread
inline constexpr uint32_t many_tid = 0xFFFFFFFFu;     // several threads read in this epoch

// Cold paths, out of line (sim_context.cpp).
void record_oob(sim_context& c, sim_buffer& b, int64_t index, bool write);
void record_uninit(sim_context& c, sim_buffer& b, int64_t index);
void record_shared(sim_context& c, hazard_kind k, const char* name, int64_t index, uint32_t other);
void record_shared_oob(sim_context& c, const char* name, int64_t index, int64_t extent, bool write);
void record_misaligned(sim_context& c, sim_buffer& b, int64_t index, int64_t alignment);
void record_shared_misaligned(sim_context& c, const char* name, int64_t index, int64_t alignment);

// The alignment a vector access of `bytes` bytes gets on a GPU: the largest power of two <= 16
// dividing its size (16 for 16 bytes of bf16).
constexpr int64_t vector_alignment(int64_t bytes) {
  return bytes % 16 == 0 ? 16 : bytes % 8 == 0 ? 8 : bytes % 4 == 0 ? 4 : bytes % 2 == 0 ? 2 : 1;
}

// The state every access reads: the barrier epoch, the epoch the block began in, the current thread.
struct hot_state {
  uint64_t epoch = 0;
  uint64_t block_epoch = 0;
  uint32_t tid = uniform_tid;
  sim_context* ctx = nullptr;
  int64_t shared_accesses = 0;  // loads and stores through shared views (vector accesses count once)
};

// A view of buffer b from element `off` on (buffer_ref::offset): index i is element j = off + i of
// the buffer, and bounds, touched extents, initialization and the log are in those elements, so a
// view that starts inside an allocation has the allocation's bounds (i < 0 may be in bounds).
template <class T>
class global_view {
 public:
  using value_type = std::remove_const_t<T>;
  global_view(T* d, int64_t n, sim_buffer* b, hot_state* h, int64_t off = 0)
      : data_(d - off), end_(off + n), off_(off), buf_(b), hs_(h) {}
  int64_t extent() const { return end_ - off_; }

  value_type load(int64_t i) const { return load_vec<1>(i)[0]; }
  template <int N>
  HEADROOM_FORCEINLINE vec<value_type, N> load_vec(int64_t vi) const {
    vec<value_type, N> r;
    buffer_stats& s = buf_->stats;
    const int64_t i = vi + off_;
    if (i >= 0 && i <= end_ - N) [[likely]] {
      if (i + N > s.touched) s.touched = i + N;
      s.bytes_read += N * static_cast<int64_t>(sizeof(T));
      ++s.loads;
      std::memcpy(static_cast<void*>(&r), data_ + i, sizeof(r));
      if (buf_->track_init) [[unlikely]]
        for (int k = 0; k < N; ++k)
          if (!buf_->written[i + k]) {
            record_uninit(*hs_->ctx, *buf_, i + k);
            r[k] = poison<value_type>();
          }
      return r;
    }
    ++s.loads;
    for (int k = 0; k < N; ++k) r[k] = load_slow(i + k);
    return r;
  }
  // The caller promises an aligned address (vector_alignment): a GPU then loads it with one
  // instruction and no run-time test. A broken promise is a misuse (on a GPU: a misaligned fault).
  template <int N>
  HEADROOM_FORCEINLINE vec<value_type, N> load_vec_aligned(int64_t vi) const {
    constexpr int64_t a = vector_alignment(N * static_cast<int64_t>(sizeof(T)));
    if (reinterpret_cast<uintptr_t>(data_ + vi + off_) % a != 0) [[unlikely]]
      record_misaligned(*hs_->ctx, *buf_, vi + off_, a);
    return load_vec<N>(vi);
  }

  void store(int64_t i, value_type v) const requires(!std::is_const_v<T>) {
    vec<value_type, 1> x;
    x[0] = v;
    store_vec<1>(i, x);
  }
  template <int N>
  HEADROOM_FORCEINLINE void store_vec(int64_t vi, const vec<value_type, N>& v) const
      requires(!std::is_const_v<T>) {
    buffer_stats& s = buf_->stats;
    ++s.stores;
    const int64_t i = vi + off_;
    if (i >= 0 && i <= end_ - N) [[likely]] {
      if (i + N > s.touched) s.touched = i + N;
      if (i + N > s.written_to) s.written_to = i + N;
      s.bytes_written += N * static_cast<int64_t>(sizeof(T));
      if (buf_->track_init) std::memset(buf_->written + i, 1, N);
      std::memcpy(static_cast<void*>(data_ + i), &v, sizeof(v));
      return;
    }
    for (int k = 0; k < N; ++k) store_slow(i + k, v[k]);
  }
  // The same store at an address the caller promises aligned (as load_vec_aligned).
  template <int N>
  HEADROOM_FORCEINLINE void store_vec_aligned(int64_t vi, const vec<value_type, N>& v) const
      requires(!std::is_const_v<T>) {
    constexpr int64_t a = vector_alignment(N * static_cast<int64_t>(sizeof(T)));
    if (reinterpret_cast<uintptr_t>(data_ + vi + off_) % a != 0) [[unlikely]]
      record_misaligned(*hs_->ctx, *buf_, vi + off_, a);
    store_vec<N>(vi, v);
  }

 private:
  value_type load_slow(int64_t j) const {
    buffer_stats& s = buf_->stats;
    if (j + 1 > s.touched) s.touched = j + 1;
    if (j < 0 || j >= end_) {
      record_oob(*hs_->ctx, *buf_, j, false);
      return poison<value_type>();
    }
    s.bytes_read += static_cast<int64_t>(sizeof(T));
    if (buf_->track_init && !buf_->written[j]) {
      record_uninit(*hs_->ctx, *buf_, j);
      return poison<value_type>();
    }
    return data_[j];
  }
  void store_slow(int64_t j, value_type x) const {
    buffer_stats& s = buf_->stats;
    if (j + 1 > s.touched) s.touched = j + 1;
    if (j + 1 > s.written_to) s.written_to = j + 1;
    if (j < 0 || j >= end_) {
      record_oob(*hs_->ctx, *buf_, j, true);
      return;
    }
    s.bytes_written += static_cast<int64_t>(sizeof(T));
    if (buf_->track_init) buf_->written[j] = 1;
    const_cast<value_type*>(data_)[j] = x;
  }

  T* data_;      // element 0 of the buffer (the view's first element less off_)
  int64_t end_;  // the buffer's extent: off_ + the view's extent
  int64_t off_;
  sim_buffer* buf_;
  hot_state* hs_;
};

// A view of an array in shared_storage. Barrier discipline is tracked per granule of G elements
// (declare G > 1 only for arrays always accessed in aligned G-wide chunks: two threads writing
// different elements of one granule in one epoch would read as a race). Per granule: the epoch and
// thread of the last write and of the last read(s). Within one epoch (between two barriers):
//   read of a granule no thread wrote in this block  -> uninitialized_read, value is poison
//   read of a granule another thread wrote           -> read_after_write race, value is poison
//   write of a granule another thread read / wrote   -> write_after_read / write_after_write race
template <class T, int G>
class shared_view {
  static_assert(sizeof(T) >= 2 && sizeof(T) % 2 == 0, "shared elements are tracked in 2-byte units");
  static constexpr int64_t meta_stride = G * static_cast<int64_t>(sizeof(T)) / 2;

 public:
  using value_type = std::remove_const_t<T>;
  shared_view(T* d, int64_t n, uint64_t* w, uint64_t* r, const char* name, hot_state* h)
      : data_(d), extent_(n), wtag_(w), rtag_(r), name_(name), hs_(h) {}
  int64_t extent() const { return extent_; }

  value_type load(int64_t i) const { return load_vec<1>(i)[0]; }
  template <int N>
  HEADROOM_FORCEINLINE vec<value_type, N> load_vec(int64_t i) const {
    vec<value_type, N> r;
    if (!(i >= 0 && i <= extent_ - N)) [[unlikely]] {
      record_out_of_bounds(i, N, false);
      return poison<vec<value_type, N>>();
    }
    const uint64_t e = hs_->epoch, b0 = hs_->block_epoch;
    const uint32_t tid = hs_->tid;
    ++hs_->shared_accesses;
    bool bad = false;
    for (int64_t g = i / G; g <= (i + N - 1) / G; ++g) {
      const uint64_t w = wtag_[g * meta_stride];
      const uint32_t wt = static_cast<uint32_t>(w);
      if ((w >> 32) < b0) [[unlikely]] {
        record_shared(*hs_->ctx, hazard_kind::uninitialized_read, name_, g * G, wt);
        bad = true;
      } else if ((w >> 32) == e && wt != tid && wt != uniform_tid) [[unlikely]] {
        record_shared(*hs_->ctx, hazard_kind::read_after_write, name_, g * G, wt);
        bad = true;
      }
      uint64_t& rt = rtag_[g * meta_stride];
      rt = ((rt >> 32) == e && static_cast<uint32_t>(rt) != tid) ? (e << 32 | many_tid) : (e << 32 | tid);
    }
    if (bad) return poison<vec<value_type, N>>();
    std::memcpy(static_cast<void*>(&r), data_ + i, sizeof(r));
    return r;
  }

  void store(int64_t i, value_type v) const requires(!std::is_const_v<T>) {
    vec<value_type, 1> x;
    x[0] = v;
    store_vec<1>(i, x);
  }
  template <int N>
  HEADROOM_FORCEINLINE void store_vec(int64_t i, const vec<value_type, N>& v) const
      requires(!std::is_const_v<T>) {
    if (!(i >= 0 && i <= extent_ - N)) [[unlikely]] {
      for (int k = 0; k < N; ++k)
        if (i + k < 0 || i + k >= extent_)
          record_shared_oob(*hs_->ctx, name_, i + k, extent_, true);
        else
          data_[i + k] = v[k];
      return;
    }
    mark_write(i, N, hs_->epoch << 32 | hs_->tid);
    std::memcpy(static_cast<void*>(data_ + i), &v, sizeof(v));
  }
  template <int N>
  HEADROOM_FORCEINLINE void store_vec_aligned(int64_t i, const vec<value_type, N>& v) const
      requires(!std::is_const_v<T>) {
    check_aligned<N>(i);
    store_vec<N>(i, v);
  }

  // An aligned vector load (load_vec_aligned of the global views); a broken promise is a misuse.
  template <int N>
  HEADROOM_FORCEINLINE vec<value_type, N> load_vec_aligned(int64_t i) const {
    check_aligned<N>(i);
    return load_vec<N>(i);
  }

  // The destination of an asynchronous copy (sim_context::copy_async), checked now like a store of
  // the current thread (bounds, alignment, races with other threads' accesses in this epoch). The
  // bytes go in now, but the granules are tagged as never written (epoch 0, the copying thread)
  // until the wait that completes the copy re-tags them (sim_context::land_copies): a read before
  // that is an uninitialized read naming the copying thread and sees poison. An out-of-bounds
  // destination is recorded and claims nothing (tag null).
  struct async_claim {
    uint64_t* tag = nullptr;  // write tag of the first granule
    int64_t granules = 0, stride = 0;
  };
  template <int N>
  async_claim begin_async_store(int64_t i, const vec<value_type, N>& v) const requires(!std::is_const_v<T>) {
    if (!(i >= 0 && i <= extent_ - N)) {
      record_out_of_bounds(i, N, true);
      return {};
    }
    check_aligned<N>(i);
    mark_write(i, N, hs_->tid);  // epoch 0: older than every block
    std::memcpy(static_cast<void*>(data_ + i), &v, sizeof(v));
    return {wtag_ + (i / G) * meta_stride, (i + N - 1) / G - i / G + 1, meta_stride};
  }

 private:
  // Records each element of [i, i + N) outside the array.
  void record_out_of_bounds(int64_t i, int N, bool write) const {
    for (int k = 0; k < N; ++k)
      if (i + k < 0 || i + k >= extent_) record_shared_oob(*hs_->ctx, name_, i + k, extent_, write);
  }
  // A vector access at i of N elements must be aligned as a GPU moves it (vector_alignment).
  template <int N>
  HEADROOM_FORCEINLINE void check_aligned(int64_t i) const {
    constexpr int64_t a = vector_alignment(N * static_cast<int64_t>(sizeof(T)));
    if (reinterpret_cast<uintptr_t>(data_ + i) % a != 0) [[unlikely]]
      record_shared_misaligned(*hs_->ctx, name_, i, a);
  }
  // The write bookkeeping of granules [i / G, (i + N - 1) / G]: races against this epoch's other
  // threads, then the write tag `tag`.
  HEADROOM_FORCEINLINE void mark_write(int64_t i, int N, uint64_t tag) const {
    const uint64_t e = hs_->epoch;
    const uint32_t tid = hs_->tid;
    ++hs_->shared_accesses;
    for (int64_t g = i / G; g <= (i + N - 1) / G; ++g) {
      uint64_t& w = wtag_[g * meta_stride];
      const uint64_t rt = rtag_[g * meta_stride];
      if ((w >> 32) == e && static_cast<uint32_t>(w) != tid) [[unlikely]]
        record_shared(*hs_->ctx, hazard_kind::write_after_write, name_, g * G, static_cast<uint32_t>(w));
      if ((rt >> 32) == e && (static_cast<uint32_t>(rt) != tid || tid == uniform_tid)) [[unlikely]]
        record_shared(*hs_->ctx, hazard_kind::write_after_read, name_, g * G, static_cast<uint32_t>(rt));
      w = tag;
    }
  }

  T* data_;
  int64_t extent_;
  uint64_t* wtag_;
  uint64_t* rtag_;
  const char* name_;
  hot_state* hs_;
};

// Per-thread state that lives across barriers (registers on a GPU): one T per thread of the block.
template <class T>
struct registers_view {
  T* p = nullptr;
  T& operator[](const thread_idx& t) const { return p[t.linear]; }
};

}  // namespace headroom::sim
