// The device-checked GPU context: the same bodies with every view access bounds-checked on the GPU.
// An out-of-bounds element is never accessed (loads return the simulator's poison, 0xFF bytes;
// stores are dropped), so a checked run cannot fault; it is counted and the first ones are logged
// (device_log.hpp) with buffer, index, extent, read/write, block and thread. Accesses from
// block-uniform code (outside ctx.threads) are logged once per block, by thread 0, with thread
// coordinates -1 as the simulator does; each view tracks its largest touched index, each thread
// keeps the per-buffer maximum of its views, and merges it into the log with one atomicMax per
// buffer when the block ends.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "targets/gpu/launch/device_log.hpp"
#include "targets/gpu/launch/gpu_context.cuh"

namespace headroom::gpu {

// Per-thread bookkeeping a checked view writes through (it lives in the context, in local memory).
struct checked_thread_state {
  device_log* log = nullptr;
  long long touched[max_log_buffers];
  unsigned long long used = 0;
  bool in_threads = false;
  thread_idx t;
};

__noinline__ HEADROOM_HOST_DEVICE inline void log_oob(checked_thread_state& s, int32_t id, const char* name,
                                                      int64_t index, int64_t extent, bool write) {
#if HEADROOM_ON_DEVICE
  if (!s.in_threads && s.t.linear != 0) return;  // block-uniform: one record per block
  const unsigned long long slot = atomicAdd(&s.log->oob_count, 1ull);
  if (slot >= static_cast<unsigned long long>(max_log_records)) return;
  device_oob_record& r = s.log->rec[slot];
  r.index = index;
  r.extent = extent;
  r.buffer_id = id;
  r.write = write ? 1 : 0;
  r.block[0] = static_cast<int32_t>(blockIdx.x);
  r.block[1] = static_cast<int32_t>(blockIdx.y);
  r.block[2] = static_cast<int32_t>(blockIdx.z);
  r.thread[0] = s.in_threads ? s.t.x : -1;
  r.thread[1] = s.in_threads ? s.t.y : -1;
  r.thread[2] = s.in_threads ? s.t.z : -1;
  int k = 0;
  for (; name && name[k] && k < 15; ++k) r.name[k] = name[k];
  r.name[k] = 0;
#else
  (void)s, (void)id, (void)name, (void)index, (void)extent, (void)write;
#endif
}

// One element of an access that is (partly) out of bounds, out of line: such accesses are rare,
// and inlining the checks and the log at every access site of an unrolled body multiplies
// compile time. Loads out of bounds return the simulator's poison (0xFF bytes).
// A read in [init, n) is uninitialized: counted (once per block from block-uniform code) and
// answered with poison, as the simulator answers it.
template <class V>
__noinline__ HEADROOM_HOST_DEVICE V checked_load_one(const V* d, int64_t n, int64_t init, int64_t j,
                                                     checked_thread_state& s, int32_t id, const char* name) {
  if (j >= 0 && j < init) return d[j];
  if (j >= 0 && j < n) {
#if HEADROOM_ON_DEVICE
    if (s.in_threads || s.t.linear == 0) atomicAdd(&s.log->uninitialized_reads, 1ull);
#endif
  } else {
    log_oob(s, id, name, j, n, false);
  }
  V x;
  std::memset(static_cast<void*>(&x), 0xFF, sizeof(V));
  return x;
}

template <class V>
__noinline__ HEADROOM_HOST_DEVICE void checked_store_one(V* d, int64_t n, int64_t j, V x,
                                                         checked_thread_state& s, int32_t id,
                                                         const char* name) {
  if (j >= 0 && j < n)
    d[j] = x;
  else
    log_oob(s, id, name, j, n, true);
}

// A global or shared view whose every element access is checked against the extent. Global views
// (id >= 0) also track the largest index touched + 1, out-of-bounds indices included. A view from
// element `off` of its buffer on (buffer_ref::offset) checks and logs buffer elements off + i.
template <class T>
class checked_view {
 public:
  using value_type = std::remove_const_t<T>;
  // A view `off` elements into its buffer (the buffer's extent is off + n). `init`: elements
  // [init, off + n) of the buffer were never written by the host (reads of them are counted).
  HEADROOM_HOST_DEVICE checked_view(T* d, int64_t n, int32_t id, const char* name, checked_thread_state* s,
                                    int64_t off = 0, int64_t init = -1)
      : d_(d - off),
        n_(off + n),
        o_(off),
        init_(init >= 0 && init < off + n ? init : off + n),
        id_(id),
        name_(name),
        s_(s) {}
  // The view keeps its own largest touched index (a register) and merges it into the thread's
  // per-buffer table once, when it goes out of scope: a dynamically indexed local-memory update
  // at every access made the checked kernels 4x slower to compile.
  HEADROOM_HOST_DEVICE checked_view(const checked_view&) = default;
  HEADROOM_HOST_DEVICE ~checked_view() {
    if (!used_ || id_ < 0) return;
    s_->used |= 1ull << id_;
    if (max_ > s_->touched[id_]) s_->touched[id_] = max_;
  }
  HEADROOM_HOST_DEVICE int64_t extent() const { return n_ - o_; }

  HEADROOM_HOST_DEVICE value_type load(int64_t i) const { return load_vec<1>(i)[0]; }
  template <int N>
  HEADROOM_HOST_DEVICE vec<value_type, N> load_vec(int64_t vi) const {
    vec<value_type, N> r;
    const int64_t i = vi + o_;
    if (i >= 0 && i <= init_ - N) {
      touch(i + N);
      copy_vec(r, d_ + i);
      return r;
    }
    touch(i + N);  // the largest element index + 1 of the access, out of bounds or not
    for (int k = 0; k < N; ++k) r[k] = checked_load_one(d_, n_, init_, i + k, *s_, id_, name_);
    return r;
  }
  // Checked like load_vec; the alignment promise is the simulator's to check (a misaligned
  // in-bounds address faults here, as it would in production).
  template <int N>
  HEADROOM_HOST_DEVICE vec<value_type, N> load_vec_aligned(int64_t vi) const {
    const int64_t i = vi + o_;
    if (i >= 0 && i <= init_ - N) {
      vec<value_type, N> r;
      touch(i + N);
      copy_vec_aligned(r, d_ + i);
      return r;
    }
    return load_vec<N>(vi);
  }

  // The address of elements [i, i + N) when all are in bounds (touched), else null (not touched).
  // A read-only view's bound is its initialised prefix (copies are its only use of the address).
  template <int N>
  HEADROOM_HOST_DEVICE T* address(int64_t vi) const {
    const int64_t i = vi + o_;
    const int64_t end = std::is_const_v<T> ? init_ : n_;
    if (!(i >= 0 && i <= end - N)) return nullptr;
    touch(i + N);
    return d_ + i;
  }

  HEADROOM_HOST_DEVICE void store(int64_t i, value_type v) const requires(!std::is_const_v<T>) {
    vec<value_type, 1> x;
    x[0] = v;
    store_vec<1>(i, x);
  }
  template <int N>
  HEADROOM_HOST_DEVICE void store_vec(int64_t vi, const vec<value_type, N>& v) const
      requires(!std::is_const_v<T>) {
    store_checked<N, false>(vi, v);
  }
  // Checked like store_vec; the alignment promise is the simulator's to check (as load_vec_aligned).
  template <int N>
  HEADROOM_HOST_DEVICE void store_vec_aligned(int64_t vi, const vec<value_type, N>& v) const
      requires(!std::is_const_v<T>) {
    store_checked<N, true>(vi, v);
  }

 private:
  template <int N, bool Aligned>
  HEADROOM_HOST_DEVICE void store_checked(int64_t vi, const vec<value_type, N>& v) const {
    const int64_t i = vi + o_;
    touch(i + N);
    if (i >= 0 && i <= n_ - N) {
      if constexpr (Aligned)
        store_vec_bytes_aligned(d_ + i, v);
      else
        store_vec_bytes(d_ + i, v);
      return;
    }
    for (int k = 0; k < N; ++k) checked_store_one(d_, n_, i + k, v[k], *s_, id_, name_);
  }
  HEADROOM_HOST_DEVICE void touch(int64_t end) const {
    used_ = true;
    if (end > max_) max_ = end;
  }
  T* d_;       // element 0 of the buffer
  int64_t n_;  // the buffer's extent (o_ + the view's)
  int64_t o_;
  int64_t init_;  // elements [init_, n_) hold no host-written value (init_ == n_: all do)
  int32_t id_;
  const char* name_;
  checked_thread_state* s_;
  mutable int64_t max_ = 0;
  mutable bool used_ = false;
};

class checked_context : public gpu_context_base {
 public:
  struct launch_state {
    device_log* log;
  };
  HEADROOM_HOST_DEVICE explicit checked_context(const launch_state& ls) {
    s_.log = ls.log;
    s_.t = t_;
    for (int i = 0; i < max_log_buffers; ++i) s_.touched[i] = 0;
  }
  template <class F>
  HEADROOM_HOST_DEVICE void threads(F&& f) {
    s_.in_threads = true;
    f(static_cast<const thread_idx&>(t_));
    s_.in_threads = false;
  }
  // A buffer_ref whose id the log cannot hold is checked against its extent but logged as id -1.
  template <class T>
  HEADROOM_HOST_DEVICE checked_view<T> global(buffer_ref<T> r) {
    const int32_t id = r.id >= 0 && r.id < max_log_buffers ? r.id : -1;
    return {r.data,
            r.extent,
            id,
            nullptr,
            &s_,
            r.offset,
            id >= 0 ? static_cast<int64_t>(s_.log->init_end[id]) : -1};
  }
  template <int G = 1, class T, std::size_t N>
  HEADROOM_HOST_DEVICE checked_view<T> shared(T (&a)[N], const char* name) {
    return {a, static_cast<int64_t>(N), shared_buffer_id, name, &s_};
  }
  template <int G = 1, class T, std::size_t N>
  HEADROOM_HOST_DEVICE checked_view<T> shared(T (&a)[N], int64_t n, const char* name) {
    return {a, n >= 0 && n <= static_cast<int64_t>(N) ? n : 0, shared_buffer_id, name, &s_};
  }
  // An in-bounds copy goes asynchronously; one out of bounds on either side is done at once
  // through the checked load and store (logged; poison lands where the source was out of bounds).
  template <int N, class T, class U>
  HEADROOM_HOST_DEVICE void copy_async(const checked_view<T>& dst, int64_t di, const checked_view<U>& src,
                                       int64_t si) {
    T* d = dst.template address<N>(di);
    const U* s = src.template address<N>(si);
    if (d && s)
      cp_async<N* static_cast<int>(sizeof(T))>(d, s);
    else
      dst.template store_vec<N>(di, src.template load_vec<N>(si));
  }
  // A lane whose row is out of bounds logs it through the checked load and reads the view's first
  // row instead: ldmatrix is a warp instruction, so every lane takes part (its fragment is then
  // wrong, and the log says so).
  template <int N, bool Trans, class T, class R, class Sel>
  HEADROOM_HOST_DEVICE void ldmatrix(const checked_view<T>& v, const gpu_registers<R>& r, Sel sel) {
    const matrix_row m = sel(static_cast<const thread_idx&>(t_), r.v);
    const T* row = v.template address<8>(m.offset);
    if (!row) {
      (void)v.template load_vec<8>(m.offset);
      row = v.template address<8>(0);
    }
    if (row) ldmatrix_rows<N, Trans>(row, m.regs);
  }
  // `first` when elements first - first % 64 .. last of the view are in bounds (a B operand's rows),
  // else 0, with the first element out of bounds logged through the checked load.
  template <class V>
  HEADROOM_HOST_DEVICE static int64_t inside(const checked_view<V>& v, int64_t first, int64_t last) {
    const int64_t row = first - first % 64;
    if (v.template address<1>(row) && v.template address<1>(last)) return first;
    (void)v.load(row < 0 || row >= v.extent() ? row : last);
    return 0;
  }
  // A product whose B is not inside the view logs it through the checked load and reads the
  // view's start instead (wgmma is a warpgroup instruction: every lane takes part).
  template <class T, int N, bool MN, int KS, class V, class R, class Sel>
  HEADROOM_HOST_DEVICE void wgmma(const checked_view<V>& v, int64_t lbo, const gpu_registers<R>& r, Sel sel) {
    wgmma_steps<T, N, MN, KS>(v.template address<1>(0), lbo, r.v, [&](R& x, int s) {
      wgmma_operands o = sel(x, s);
      o.b = inside(v, o.b, wgmma_b_last<N, MN>(o.b, lbo));
      return o;
    });
  }
  // The same 32-bit value; a wrap is counted in the log (as the simulator does).
  HEADROOM_HOST_DEVICE int64_t offset32(int64_t a, int64_t b, int64_t c = 0) {
#if HEADROOM_ON_DEVICE
    if (wraps32_mad(a, b, c)) atomicAdd(&s_.log->index_overflows, 1ull);
#endif
    return wrap32_mad(a, b, c);
  }
  // Merges this thread's touched extents into the log (the launcher calls it after the body).
  HEADROOM_HOST_DEVICE void finish() {
#if HEADROOM_ON_DEVICE
    if (s_.used == 0) return;
    atomicOr(&s_.log->used_mask, s_.used);
    for (int i = 0; i < max_log_buffers; ++i)
      if (s_.used & (1ull << i)) atomicMax(&s_.log->touched[i], s_.touched[i]);
#endif
  }

 private:
  checked_thread_state s_;
};

}  // namespace headroom::gpu
