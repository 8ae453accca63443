// Hopper's warpgroup products (wgmma.mma_async, sm_90a) for the GPU contexts: D += A B over
// m64nNk16, A from the lanes' registers (each warp of the warpgroup its 16 rows, in mma.m16n8k16's A
// layout), B from shared memory through a matrix descriptor in the 128-byte swizzled layout
// (core/sim/device_types.hpp: sw128_at), fp32 accumulators in mma's C layout repeated over N / 8.
// Every function is a no-op outside an sm_90a device pass; the contexts use them only where
// gpu_has_wgmma holds.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/sim/device_types.hpp"
#include "kernels/numeric.hpp"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HEADROOM_WGMMA 1
#else
#define HEADROOM_WGMMA 0
#endif

namespace headroom::gpu {

// Whether this compilation pass issues wgmma (an sm_90a device pass; the host pass says yes too,
// so that host instantiations of a body take the path the device runs).
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
inline constexpr bool gpu_has_wgmma = true;
#else
inline constexpr bool gpu_has_wgmma = false;
#endif

// The descriptor of a B operand at shared address `addr` (bytes, 16-aligned; its 1024-byte atom
// aligned): leading byte offset `lbo` (between 64-element column blocks of an MN-major operand),
// stride byte offset 1024 (between groups of 8 rows), 128-byte swizzle.
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE uint64_t sw128_desc(uint32_t addr, uint32_t lbo) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | static_cast<uint64_t>((lbo & 0x3FFFF) >> 4) << 16 |
         static_cast<uint64_t>(1024 >> 4) << 32 | uint64_t{1} << 62;
}

HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void wgmma_fence() {
#if HEADROOM_WGMMA
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void wgmma_commit() {
#if HEADROOM_WGMMA
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
// Ties the accumulators to the point of the call, so the compiler moves no access to them across
// an issue or a wait (which do not name them).
template <int N>
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void wgmma_pin(float* d) {
#if HEADROOM_WGMMA
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
#else
  (void)d;
#endif
}
// Orders this thread's generic-proxy writes to shared memory (stores, cp.async) before later
// reads by the async proxy (wgmma's operands); a barrier after it publishes them to the block.
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void async_proxy_fence() {
#if HEADROOM_WGMMA
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// wgmma.mma_async m64nNk16 with A from registers, fp32 accumulators d[0 .. N / 2), element type TY
// ("bf16" or "f16"), scale-d from the last operand (1: accumulate), B transposed by Trans (one
// statement each, used by wgmma_rs only).
// clang-format off
#define HEADROOM_WGMMA_RS_M64N32(TY) \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %22, 0;\n" \
               "wgmma.mma_async.sync.aligned.m64n32k16.f32." TY "." TY " " \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, " \
               "{%16, %17, %18, %19}, %20, p, 1, 1, %21;\n}\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]) \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(Trans), "n"(1))
#define HEADROOM_WGMMA_RS_M64N64(TY) \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %38, 0;\n" \
               "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " " \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, " \
               "{%32, %33, %34, %35}, %36, p, 1, 1, %37;\n}\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(Trans), "n"(1))
#define HEADROOM_WGMMA_RS_M64N128(TY) \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %70, 0;\n" \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " " \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, " \
               "{%64, %65, %66, %67}, %68, p, 1, 1, %69;\n}\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(Trans), "n"(1))
// clang-format on

// One m64nNk16 product issued (N 32, 64 or 128; Trans 1: B is MN-major): d holds N / 2 floats.
template <class T, int N, int Trans>
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void wgmma_rs(float* d, const uint32_t* a, uint64_t desc) {
  static_assert(N == 32 || N == 64 || N == 128, "the shapes the tile passes use");
  static_assert(std::is_same_v<T, bf16> || std::is_same_v<T, fp16>, "16-bit inputs");
#if HEADROOM_WGMMA
  // clang-format off
  constexpr bool bf = std::is_same_v<T, bf16>;  // the PTX type: bf16, else f16
  if constexpr (N == 32) { if constexpr (bf) HEADROOM_WGMMA_RS_M64N32("bf16"); else HEADROOM_WGMMA_RS_M64N32("f16"); }
  if constexpr (N == 64) { if constexpr (bf) HEADROOM_WGMMA_RS_M64N64("bf16"); else HEADROOM_WGMMA_RS_M64N64("f16"); }
  if constexpr (N == 128) { if constexpr (bf) HEADROOM_WGMMA_RS_M64N128("bf16"); else HEADROOM_WGMMA_RS_M64N128("f16"); }
// clang-format on
#else
  (void)d, (void)a, (void)desc;
#endif
}
#undef HEADROOM_WGMMA_RS_M64N32
#undef HEADROOM_WGMMA_RS_M64N64
#undef HEADROOM_WGMMA_RS_M64N128

// The last element of B (16 x N at b) a product reads: the end of row N - 1 (K-major) or of row 15
// in the last column block (MN-major), rows counted from the start of b's row (the swizzle moves
// chunks anywhere within a row); every element read lies in [b - b % 64, that].
template <int N, bool MN>
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE int64_t wgmma_b_last(int64_t b, int64_t lbo) {
  const int64_t row = b - b % 64;
  return MN ? row + (N - 1) / 64 * lbo + 64 * 15 + 63 : row + 64 * (N - 1) + 63;
}

// ctx.wgmma on a GPU (core/sim/context.hpp): the KS products of sel(lane, s) with B at element
// offset o.b of `view` (a 1024-byte-aligned shared array: else the block traps), issued as one
// commit group; nothing waits for them here (wgmma_wait_pin).
template <class T, int N, bool MN, int KS, class Lane, class Sel>
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void wgmma_steps(const void* view, int64_t lbo, Lane& lane,
                                                           Sel sel) {
#if HEADROOM_WGMMA
  const auto base = static_cast<uint32_t>(__cvta_generic_to_shared(view));
  if (base & 1023u) __trap();
  const wgmma_operands o0 = sel(lane, 0);
  const uint32_t b0 = __shfl_sync(0xFFFFFFFFu, base + 2 * static_cast<uint32_t>(o0.b), 0);
  wgmma_fence();
#pragma unroll
  for (int s = 0; s < KS; ++s) {
    const wgmma_operands o = sel(lane, s);
    wgmma_pin<N / 2>(o.d);
    wgmma_rs<T, N, MN ? 1 : 0>(
        o.d, o.a, sw128_desc(b0 + 2 * static_cast<uint32_t>(o.b - o0.b), 2 * static_cast<uint32_t>(lbo)));
  }
  wgmma_commit();
#else
  (void)view, (void)lbo, (void)lane, (void)sel;
#endif
}

// ctx.wgmma_wait on a GPU: until at most P groups are in flight, then the arrays pins(lane, pin)
// names are pinned after the wait.
struct wgmma_pinner {
  template <class A>
  HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void operator()(A& a) const {
    static_assert(sizeof(A) % sizeof(float) == 0, "arrays of 32-bit accumulators");
    wgmma_pin<static_cast<int>(sizeof(A) / sizeof(float))>(reinterpret_cast<float*>(&a));
  }
};
template <int P, class Lane, class Pins>
HEADROOM_HOST_DEVICE HEADROOM_FORCEINLINE void wgmma_wait_pin(Lane& lane, Pins pins) {
#if HEADROOM_WGMMA
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(P) : "memory");
  pins(lane, wgmma_pinner{});
#else
  (void)lane, (void)pins;
#endif
}

}  // namespace headroom::gpu
