// The zero-cost GPU context (core/sim/context.hpp): block and thread indices from the hardware,
// __syncthreads, raw-pointer views, registers as one local value per thread, and lane sums as a
// __shfl_xor_sync butterfly in the simulator's order (the lower lane adds the upper one; IEEE
// addition commutes, so both lanes get the simulator's bits). Members are __host__ __device__ so
// the bodies' host instantiations compile; only the device ones ever run. (kernel_context<> is
// not asserted here: nvcc 13 rejects its host lambda in a requires-expression; instantiating
// every body with this context in targets/gpu/launch/dispatch_*.cu checks the interface instead.)
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/sim/context.hpp"
#include "core/sim/device_types.hpp"
#include "targets/gpu/launch/dependent_launch.cuh"
#include "targets/gpu/launch/wgmma.cuh"
#include "kernels/numeric.hpp"

namespace headroom::gpu {

// Moves Bytes bytes from s to d in accesses of Width bytes (16: uint4, 8: uint2, 4: uint32_t,
// else elements E): both addresses aligned to Width. (The loops have constant trip counts: nvcc
// unrolls them without a pragma the host compiler would warn about.)
template <int Bytes, int Width, class E>
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void move_as(void* d, const void* s) {
  using W = std::conditional_t<
      Width == 16, uint4,
      std::conditional_t<Width == 8, uint2,
                         std::conditional_t<Width == 4, uint32_t, std::remove_const_t<E>>>>;
  static_assert(Bytes % sizeof(W) == 0, "whole accesses");
  for (int k = 0; k < Bytes / static_cast<int>(sizeof(W)); ++k)
    static_cast<W*>(d)[k] = static_cast<const W*>(s)[k];
}

// The widest of 16, 8 and 4 bytes that divides Bytes and is wider than an element, else the element.
template <int Bytes, class E>
inline constexpr int widest_access = Bytes % 16 == 0                   ? 16
                                     : Bytes % 8 == 0                  ? 8
                                     : Bytes % 4 == 0 && sizeof(E) < 4 ? 4
                                                                       : static_cast<int>(sizeof(E));

// Moves Bytes bytes with the widest accesses `addr` (the global side's address) is aligned to, so
// 16 bytes of bf16 move as one LDG.128 / STG.128 when aligned.
template <int Bytes, class E>
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void move_widest(void* d, const void* s, uintptr_t addr) {
  if constexpr (Bytes % 16 == 0)
    if (addr % 16 == 0) return move_as<Bytes, 16, E>(d, s);
  if constexpr (Bytes % 8 == 0)
    if (addr % 8 == 0) return move_as<Bytes, 8, E>(d, s);
  if constexpr (Bytes % 4 == 0 && sizeof(E) < 4)
    if (addr % 4 == 0) return move_as<Bytes, 4, E>(d, s);
  move_as<Bytes, static_cast<int>(sizeof(E)), E>(d, s);
}

// One N-element vector from src, at the widest accesses its address allows; _aligned: from an address
// the caller knows to be aligned to the vector (load_vec_aligned), with no run-time test.
template <class V, class T>
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void copy_vec(V& dst, const T* src) {
  move_widest<sizeof(V), T>(&dst, src, reinterpret_cast<uintptr_t>(src));
}
template <class V, class T>
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void copy_vec_aligned(V& dst, const T* src) {
  move_as<sizeof(V), widest_access<sizeof(V), T>, T>(&dst, src);
}

// The same for a store to dst (store_vec; _aligned: store_vec_aligned).
template <class V, class T>
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void store_vec_bytes(T* dst, const V& src) {
  move_widest<sizeof(V), T>(dst, &src, reinterpret_cast<uintptr_t>(dst));
}
template <class V, class T>
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void store_vec_bytes_aligned(T* dst, const V& src) {
  move_as<sizeof(V), widest_access<sizeof(V), T>, T>(dst, &src);
}

// One cp.async of Bytes (4, 8 or 16) from global to shared memory; 16 bytes bypass L1 (.cg).
template <int Bytes>
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void cp_async(void* smem, const void* gmem) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async moves 4, 8 or 16 bytes");
#if HEADROOM_ON_DEVICE
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(gmem), "n"(Bytes) : "memory");
#else
  (void)smem, (void)gmem;
#endif
}

// ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16 with this lane's row at `row` (shared memory,
// 16-byte aligned): N registers of the lane's fragments (core/sim/warp_ops.hpp).
#define HEADROOM_LDMATRIX(N, TRANS, REGS, ...)                                                \
  asm volatile("ldmatrix.sync.aligned.m8n8.x" #N TRANS ".shared.b16 {" REGS "}, [%" #N "];\n" \
               : __VA_ARGS__                                                                  \
               : "r"(s))
template <int N, bool Trans>
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void ldmatrix_rows(const void* row, uint32_t* x) {
  static_assert(N == 1 || N == 2 || N == 4, "ldmatrix loads 1, 2 or 4 matrices");
#if HEADROOM_ON_DEVICE
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(row));
  if constexpr (N == 4 && Trans)
    HEADROOM_LDMATRIX(4, ".trans", "%0,%1,%2,%3", "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3]));
  else if constexpr (N == 4)
    HEADROOM_LDMATRIX(4, "", "%0,%1,%2,%3", "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3]));
  else if constexpr (N == 2 && Trans)
    HEADROOM_LDMATRIX(2, ".trans", "%0,%1", "=r"(x[0]), "=r"(x[1]));
  else if constexpr (N == 2)
    HEADROOM_LDMATRIX(2, "", "%0,%1", "=r"(x[0]), "=r"(x[1]));
  else if constexpr (Trans)
    HEADROOM_LDMATRIX(1, ".trans", "%0", "=r"(x[0]));
  else
    HEADROOM_LDMATRIX(1, "", "%0", "=r"(x[0]));
#else
  (void)row, (void)x;
#endif
}
#undef HEADROOM_LDMATRIX

// A view with no checks: what a production kernel does with a pointer.
template <class T>
struct raw_view {
  using value_type = std::remove_const_t<T>;
  T* d;
  int64_t n;
  HEADROOM_HOST_DEVICE int64_t extent() const { return n; }
  HEADROOM_HOST_DEVICE value_type load(int64_t i) const { return d[i]; }
  template <int N>
  HEADROOM_HOST_DEVICE vec<value_type, N> load_vec(int64_t i) const {
    vec<value_type, N> r;
    copy_vec(r, d + i);
    return r;
  }
  template <int N>
  HEADROOM_HOST_DEVICE vec<value_type, N> load_vec_aligned(int64_t i) const {
    vec<value_type, N> r;
    copy_vec_aligned(r, d + i);
    return r;
  }
  HEADROOM_HOST_DEVICE void store(int64_t i, value_type v) const requires(!std::is_const_v<T>) { d[i] = v; }
  template <int N>
  HEADROOM_HOST_DEVICE void store_vec(int64_t i, const vec<value_type, N>& v) const
      requires(!std::is_const_v<T>) {
    store_vec_bytes(d + i, v);
  }
  template <int N>
  HEADROOM_HOST_DEVICE void store_vec_aligned(int64_t i, const vec<value_type, N>& v) const
      requires(!std::is_const_v<T>) {
    store_vec_bytes_aligned(d + i, v);
  }
};

// ctx.registers<T>(): on a GPU every thread holds its own T; r[t] ignores t.
template <class T>
struct gpu_registers {
  mutable T v;
  HEADROOM_HOST_DEVICE T& operator[](const thread_idx&) const { return v; }
};

// The hardware side every GPU context shares: indices, barrier, registers, lane sums.
class gpu_context_base {
 public:
  HEADROOM_HOST_DEVICE gpu_context_base() {
#if HEADROOM_ON_DEVICE
    t_ = {static_cast<int>(threadIdx.x), static_cast<int>(threadIdx.y), static_cast<int>(threadIdx.z),
          static_cast<int>(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))};
    const int n = static_cast<int>(blockDim.x * blockDim.y * blockDim.z);
    const int in_warp = n - (t_.linear & ~31);  // threads of this warp that exist
    mask_ = in_warp >= 32 ? 0xFFFFFFFFu : (1u << in_warp) - 1u;
#endif
  }
  HEADROOM_HOST_DEVICE launch_dim block_idx() const {
#if HEADROOM_ON_DEVICE
    return {blockIdx.x, blockIdx.y, blockIdx.z};
#else
    return {};
#endif
  }
  HEADROOM_HOST_DEVICE launch_dim grid_dim() const {
#if HEADROOM_ON_DEVICE
    return {gridDim.x, gridDim.y, gridDim.z};
#else
    return {};
#endif
  }
  HEADROOM_HOST_DEVICE launch_dim block_dim() const {
#if HEADROOM_ON_DEVICE
    return {blockDim.x, blockDim.y, blockDim.z};
#else
    return {};
#endif
  }
  HEADROOM_HOST_DEVICE void sync() {
#if HEADROOM_ON_DEVICE
    __syncthreads();
#endif
  }
  template <class T>
  HEADROOM_HOST_DEVICE gpu_registers<T> registers() {
    static_assert(std::is_trivially_copyable_v<T>, "registers hold plain values");
    return {};
  }
  // Butterfly over groups of `width` lanes `stride` apart (the group span divides the block, so a
  // partial last warp only ever exchanges with lanes that exist; the mask names exactly those).
  template <int N>
  HEADROOM_HOST_DEVICE void lane_sum(const gpu_registers<fvec<N>>& r, int width, int stride = 1) {
    butterfly(r, width, stride, [](float a, float b) { return a + b; });
  }
  template <int N>
  HEADROOM_HOST_DEVICE void lane_max(const gpu_registers<fvec<N>>& r, int width, int stride = 1) {
    butterfly(r, width, stride, [](float a, float b) { return fmaxf(a, b); });
  }
  // mma.sync.aligned.m16n8k16 (fp32 accumulate) and movmatrix.trans: whole warps only (the bodies
  // that use them launch {32, W} blocks); layouts in core/sim/warp_ops.hpp.
  template <class T, class R, class Sel>
  HEADROOM_HOST_DEVICE void mma_m16n8k16(const gpu_registers<R>& r, Sel sel) {
#if HEADROOM_ON_DEVICE
    const mma_operands o = sel(r.v);
    float* c = o.c;
    if constexpr (std::is_same_v<T, bf16>)
      asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%0,%1,%2,%3};"
          : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
          : "r"(o.a[0]), "r"(o.a[1]), "r"(o.a[2]), "r"(o.a[3]), "r"(o.b[0]), "r"(o.b[1]));
    else
      asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%0,%1,%2,%3};"
          : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
          : "r"(o.a[0]), "r"(o.a[1]), "r"(o.a[2]), "r"(o.a[3]), "r"(o.b[0]), "r"(o.b[1]));
#else
    (void)r, (void)sel;
#endif
  }
  template <int N, class R, class Sel>
  HEADROOM_HOST_DEVICE void transpose8x8(const gpu_registers<R>& r, Sel sel) {
#if HEADROOM_ON_DEVICE
    uint32_t* x = sel(r.v);
#pragma unroll
    for (int i = 0; i < N; ++i) asm("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(x[i]) : "r"(x[i]));
#else
    (void)r, (void)sel;
#endif
  }
  static constexpr bool has_wgmma = gpu_has_wgmma;  // ctx.wgmma: sm_90a device passes (and host)
  HEADROOM_HOST_DEVICE void fence_async_proxy() { async_proxy_fence(); }
  template <int P, class R, class Pins>
  HEADROOM_HOST_DEVICE void wgmma_wait(const gpu_registers<R>& r, Pins pins) {
    wgmma_wait_pin<P>(r.v, pins);
  }
  // cp.async groups (the copies themselves are the contexts' copy_async).
  HEADROOM_HOST_DEVICE void async_commit() {
#if HEADROOM_ON_DEVICE
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
  }
  template <int P>
  HEADROOM_HOST_DEVICE void async_wait() {
#if HEADROOM_ON_DEVICE
    asm volatile("cp.async.wait_group %0;\n" ::"n"(P) : "memory");
#endif
  }
  // The body's own wait for the launch before it (core/sim/context.hpp; launch.cuh then skips its).
  HEADROOM_HOST_DEVICE void wait_prior_launch() {
#if HEADROOM_ON_DEVICE
    wait_for_launch_before();
#endif
  }
  HEADROOM_HOST_DEVICE const thread_idx& thread() const { return t_; }
  // a * b + c in int32 arithmetic, as a kernel with 32-bit offsets computes it.
  HEADROOM_HOST_DEVICE int64_t offset32(int64_t a, int64_t b, int64_t c = 0) const {
    return wrap32_mad(a, b, c);
  }

 protected:
  // The xor butterfly of lane_sum / lane_max (core/sim/warp_ops.hpp's lane_butterfly on the host).
  template <int N, class Op>
  HEADROOM_HOST_DEVICE void butterfly(const gpu_registers<fvec<N>>& r, int width, int stride, Op op) {
#if HEADROOM_ON_DEVICE
    for (int off = width / 2 * stride; off >= stride; off /= 2)
#pragma unroll
      for (int k = 0; k < N; ++k) r.v[k] = op(r.v[k], __shfl_xor_sync(mask_, r.v[k], off));
#else
    (void)r, (void)width, (void)stride, (void)op;
#endif
  }

  thread_idx t_{};
  unsigned mask_ = 0xFFFFFFFFu;
};

// The production context: raw views, no checks, nothing recorded.
class gpu_context : public gpu_context_base {
 public:
  struct launch_state {};  // nothing travels with the launch
  HEADROOM_HOST_DEVICE explicit gpu_context(const launch_state&) {}
  template <class F>
  HEADROOM_HOST_DEVICE void threads(F&& f) {
    f(static_cast<const thread_idx&>(t_));
  }
  template <class T>
  HEADROOM_HOST_DEVICE raw_view<T> global(buffer_ref<T> r) {
    return {r.data, r.extent};
  }
  template <int G = 1, class T, std::size_t N>
  HEADROOM_HOST_DEVICE raw_view<T> shared(T (&a)[N], const char*) {
    return {a, static_cast<int64_t>(N)};
  }
  template <int G = 1, class T, std::size_t N>
  HEADROOM_HOST_DEVICE raw_view<T> shared(T (&a)[N], int64_t n, const char*) {
    return {a, n};
  }
  template <int N, class T, class U>
  HEADROOM_HOST_DEVICE void copy_async(const raw_view<T>& dst, int64_t di, const raw_view<U>& src,
                                       int64_t si) {
    cp_async<N* static_cast<int>(sizeof(T))>(dst.d + di, src.d + si);
  }
  template <int N, bool Trans, class T, class R, class Sel>
  HEADROOM_HOST_DEVICE void ldmatrix(const raw_view<T>& v, const gpu_registers<R>& r, Sel sel) {
    const matrix_row m = sel(static_cast<const thread_idx&>(t_), r.v);
    ldmatrix_rows<N, Trans>(v.d + m.offset, m.regs);
  }
  template <class T, int N, bool MN, int KS, class V, class R, class Sel>
  HEADROOM_HOST_DEVICE void wgmma(const raw_view<V>& v, int64_t lbo, const gpu_registers<R>& r, Sel sel) {
    wgmma_steps<T, N, MN, KS>(v.d, lbo, r.v, sel);
  }
  HEADROOM_HOST_DEVICE void finish() {}
};

}  // namespace headroom::gpu
