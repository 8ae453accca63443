// The same kernel bodies run natively on the CPU with every check compiled out: raw-pointer views,
// barriers that do nothing (threads of a phase run in order, so a correct body sees what it would
// see on a GPU), the same register arena and lane sums. It is the baseline for the simulator's
// overhead (bench/bench_sim.cpp) and a fast path when a result is wanted without checking.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "core/sim/arena.hpp"
#include "core/sim/device_types.hpp"
#include "core/sim/launch.hpp"
#include "core/sim/warp_ops.hpp"

namespace headroom::sim {

template <class T>
struct native_view {
  using value_type = std::remove_const_t<T>;
  T* d;
  int64_t n;
  int64_t extent() const { return n; }
  value_type load(int64_t i) const { return d[i]; }
  template <int N>
  vec<value_type, N> load_vec(int64_t i) const {
    vec<value_type, N> r;
    std::memcpy(static_cast<void*>(&r), d + i, sizeof(r));
    return r;
  }
  template <int N>
  vec<value_type, N> load_vec_aligned(int64_t i) const {
    return load_vec<N>(i);
  }
  void store(int64_t i, value_type v) const requires(!std::is_const_v<T>) { d[i] = v; }
  template <int N>
  void store_vec(int64_t i, const vec<value_type, N>& v) const requires(!std::is_const_v<T>) {
    std::memcpy(static_cast<void*>(d + i), &v, sizeof(v));
  }
  template <int N>
  void store_vec_aligned(int64_t i, const vec<value_type, N>& v) const requires(!std::is_const_v<T>) {
    store_vec<N>(i, v);
  }
};

class native_context {
 public:
  native_context(launch_dim g, launch_dim b) : grid_(g), block_(b), n_(static_cast<int>(b.count())) {}
  launch_dim block_idx() const { return idx_; }
  launch_dim grid_dim() const { return grid_; }
  launch_dim block_dim() const { return block_; }
  template <class F>
  void threads(F&& f) {
    thread_idx t;
    for (t.z = 0; t.z < block_.z; ++t.z)
      for (t.y = 0; t.y < block_.y; ++t.y)
        for (t.x = 0; t.x < block_.x; ++t.x, ++t.linear) f(static_cast<const thread_idx&>(t));
  }
  void sync() {}
  template <class T>
  native_view<T> global(buffer_ref<T> r) {
    return {r.data, r.extent};
  }
  template <int G = 1, class T, std::size_t N>
  native_view<T> shared(T (&a)[N], const char*) {
    return {a, static_cast<int64_t>(N)};
  }
  template <int G = 1, class T, std::size_t N>
  native_view<T> shared(T (&a)[N], int64_t n, const char*) {
    return {a, n};
  }
  template <class T>
  registers_view<T> registers() {
    return {static_cast<T*>(arena_.alloc(sizeof(T) * static_cast<std::size_t>(n_)))};
  }
  template <int N>
  void lane_sum(registers_view<fvec<N>> r, int width, int stride = 1) {
    lane_butterfly(r, n_, width, stride, [](float a, float b) { return a + b; });
  }
  template <int N>
  void lane_max(registers_view<fvec<N>> r, int width, int stride = 1) {
    lane_butterfly(r, n_, width, stride, [](float a, float b) { return std::fmax(a, b); });
  }
  template <class T, class R, class Sel>
  void mma_m16n8k16(registers_view<R> r, Sel sel) {
    emulate_mma<T>(r, n_, sel);
  }
  template <int N, class R, class Sel>
  void transpose8x8(registers_view<R> r, Sel sel) {
    emulate_transpose8x8<N>(r, n_, sel);
  }
  template <int N, bool Trans, class SV, class R, class Sel>
  void ldmatrix(const SV& v, registers_view<R> r, Sel sel) {
    emulate_ldmatrix<N, Trans>(block_, r, [&](const thread_idx& t, R& x, uint16_t* row) {
      const matrix_row m = sel(t, x);
      if (row) std::memcpy(row, v.d + m.offset, 8 * sizeof(uint16_t));
      return m.regs;
    });
  }
  static constexpr bool has_wgmma = true;
  template <class T, int N, bool MN, int KS, class SV, class R, class Sel>
  void wgmma(const SV& v, int64_t lbo, registers_view<R> r, Sel sel) {
    emulate_wgmma<T, N, MN, KS>(r, n_, v, lbo, sel);
  }
  template <int P, class R, class Pins>
  void wgmma_wait(registers_view<R>, Pins) {}
  void fence_async_proxy() {}
  // Asynchronous copies land at once (a correct body waits before it reads them).
  template <int N, class SV, class GV>
  void copy_async(const SV& dst, int64_t di, const GV& src, int64_t si) {
    dst.template store_vec<N>(di, src.template load_vec<N>(si));
  }
  void async_commit() {}
  template <int P>
  void async_wait() {}
  void wait_prior_launch() {}
  int64_t offset32(int64_t a, int64_t b, int64_t c = 0) { return wrap32_mad(a, b, c); }
  void begin_block(launch_dim b) {
    idx_ = b;
    arena_.reset();
  }

 private:
  launch_dim grid_, block_, idx_;
  int n_;
  register_arena arena_;
};

template <class K>
void launch_native(const K& kernel, const typename K::params& p) {
  const launch_dim g = K::grid(p), b = K::block(p);
  check_launch_shape(g, b);
  native_context ctx(g, b);
  // Per thread, made on first use: a static thread_local of every body's storage would be
  // zero-filled by every new thread (megabytes each) whether it ever runs that body or not.
  struct alignas(128) holder {
    typename K::shared_storage s;
  };
  static thread_local std::unique_ptr<holder> h;
  if (!h) h = std::make_unique<holder>();
  typename K::shared_storage& s = h->s;
  for (int64_t z = 0; z < g.z; ++z)
    for (int64_t y = 0; y < g.y; ++y)
      for (int64_t x = 0; x < g.x; ++x) {
        ctx.begin_block({x, y, z});
        kernel(ctx, p, s);
      }
}

}  // namespace headroom::sim
