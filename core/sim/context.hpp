// The kernel context interface: everything a kernel body may use. Three implementations: the
// simulator's sim_context (checked), native_context (checks compiled out), and the GPU context of
// the GPU target (zero cost). A body is written once:
//
//   struct my_kernel {
//     struct params { buffer_ref<const float> in; buffer_ref<float> out; int64_t n; };
//     struct shared_storage { float tile[256]; };                  // __shared__ on a GPU
//     static launch_dim grid(const params& p);
//     static launch_dim block(const params& p);                    // <= 1024 threads
//     static std::size_t shared_bytes(const params& p);            // optional: the GPU allocates
//                                                                  // only this prefix of it
//     template <class Ctx>
//     HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage& s) const;
//   };
//
// The body itself is block-uniform code (every thread runs it on a GPU; the simulator runs it once
// per block): loops around barriers and early returns must not depend on the thread.
//   ctx.block_idx(), ctx.grid_dim(), ctx.block_dim()   -> launch_dim
//   ctx.threads(f)            f(const thread_idx& t) for every thread of the block (GPU: once, for
//                             threadIdx). Thread-divergent code lives only inside f.
//   ctx.sync()                __syncthreads(); never inside threads().
//   ctx.global(buffer_ref<T>) a global view; ctx.shared<G>(s.array, "name") a shared view, barrier
//                             discipline tracked per granule of G elements (sim_views.hpp);
//                             ctx.shared<G>(s.array, n, "name") a view of its first n elements
//                             (a body whose launch allocates less than its shared_storage).
//   view.load(i), view.store(i, v), view.load_vec<N>(i), view.store_vec<N>(i, vec<T,N>),
//   view.extent()             element indices (int64_t); vector accesses move N consecutive elements.
//   view.load_vec_aligned<N>(i)  the same load from an address the body knows is aligned to the
//                             vector (16 bytes for 8 bf16): no run-time test on a GPU; the simulator
//                             records a broken promise as a misuse. view.store_vec_aligned<N>(i, v):
//                             the same promise for a store.
//   ctx.registers<T>()        registers_view<T>: r[t] is thread t's T, kept across barriers (GPU: a
//                             plain local variable; T must be trivially copyable).
//   ctx.lane_sum(r, width[, stride]), ctx.lane_max(...)
//                             r: registers_view<fvec<N>>; butterfly sum / maximum over groups of
//                             `width` threads `stride` apart (width * stride a power of two <= 32:
//                             __shfl_xor_sync on a GPU); every member gets the group's result.
//                             Block-uniform, like sync().
//   ctx.mma_m16n8k16<T>(r, sel), ctx.transpose8x8<N>(r, sel)
//                             warp collectives on tensor-core fragments (T = bf16 / fp16): sel(R&)
//                             names the lane's operands (mma_operands) or its N registers of 8x8
//                             matrices; layouts and the host emulation in core/sim/warp_ops.hpp.
//                             Whole warps only; block-uniform.
//   ctx.ldmatrix<N, Trans>(sv, r, sel)
//                             ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16 from shared view sv:
//                             sel(const thread_idx&, R&) -> matrix_row{offset, regs}: lane 8i + k
//                             names row k of matrix i (8 elements at offset, 16-byte aligned) and
//                             gets its N fragments of the matrices (Trans: of their transposes) in
//                             regs (warp_ops.hpp).
//                             Each lane's row is checked as its own aligned load. Whole warps only;
//                             block-uniform.
//   ctx.wgmma<T, N, MN, KS>(sv, lbo, r, sel)
//                             issues KS warpgroup products D += A B (wgmma.mma_async m64nNk16, fp32
//                             accumulate, in order, one commit group) with B from shared view sv:
//                             sel(R&, s) -> wgmma_operands{a, d, b} of product s; B (16 x N) at
//                             unswizzled element offset b in 128-byte swizzled rows, K-major or
//                             MN-major (MN; column blocks lbo elements apart): device_types.hpp's
//                             wgmma_b_at and sw128_at. The view's start is 1024-byte aligned on a
//                             GPU. Until a wgmma_wait completes the group, its A and D registers
//                             and B must not change (nor D be read); the simulator computes the
//                             products at the issue. Whole warpgroups only; block-uniform.
//   ctx.wgmma_wait<P>(r, pins) until at most P groups of the warpgroup are in flight; pins(R&, pin)
//                             calls pin(array) on each accumulator array the completed groups
//                             wrote, which the GPU ties to the wait. Block-uniform.
//   ctx.fence_async_proxy()   orders this thread's shared-memory writes (stores, landed copies)
//                             before wgmma's reads of them (fence.proxy.async); a barrier after it
//                             publishes them to the block. Block-uniform.
//   ctx.copy_async<N>(dst, di, src, si)
//                             inside threads(): this thread's asynchronous copy of N elements (4, 8
//                             or 16 bytes, aligned on both sides) from global view src at si to
//                             shared view dst at di (cp.async on a GPU). It lands before the
//                             async_wait that completes its group; until then the destination
//                             must not be read. After the wait only the copying thread may read
//                             it (other threads need a barrier as well).
//   ctx.async_commit()        closes every thread's group of copies issued since the last commit.
//   ctx.async_wait<P>()       waits until at most P committed groups of every thread are still in
//                             flight. Both block-uniform, like sync().
//   ctx.offset32(a, b, c)     a * b + c as a kernel computing offsets in 32-bit integers does: the
//                             wrapped value (GPU: int32 arithmetic). The simulator and the
//                             device-checked build also count every evaluation that wraps
//                             (index_overflows in their logs): what a kernel's int32 offsets hide.
//   ctx.wait_prior_launch()   from here on the block may read what the launches before it wrote.
//                             Only in a body that declares `static constexpr bool
//                             waits_for_prior_launch = true` (the launcher then does not wait for
//                             it): the body reads its inputs first (launch parameters, buffers the
//                             host filled) while the previous launch still ends, then waits (on a
//                             GPU: griddepcontrol.wait of a programmatic dependent launch). The
//                             simulator records a misuse when such a body opens a view of a buffer
//                             launches write (fill::scratch) before the wait. Block-uniform.
//                             (A launch that writes out of bounds into an input races with these
//                             reads on a GPU; that write is reported as out of bounds anyway.)
// Bodies never touch threadIdx, __syncthreads, __shared__ or raw pointers, never throw, never
// allocate, and use no std:: containers or virtual calls (they compile under nvcc).
// Notes for the GPU context: threads(f) calls f once with {threadIdx, linear id}; registers<T>()
// returns a struct holding one T whose operator[] ignores the thread; lane_sum must mask lanes of a
// partial last warp when the block is not a multiple of 32 threads.
#pragma once

#include <concepts>
#include <cstdint>

#include "core/sim/device_types.hpp"

namespace headroom {

// Host-side statement of the interface (the GPU context satisfies it in host compilation too).
template <class C>
concept kernel_context = requires(C& c, buffer_ref<float> b, buffer_ref<const int32_t> cb) {
  { c.block_idx() } -> std::convertible_to<launch_dim>;
  { c.grid_dim() } -> std::convertible_to<launch_dim>;
  { c.block_dim() } -> std::convertible_to<launch_dim>;
  c.threads([](const thread_idx&) {});
  c.sync();
  { c.global(b).load(int64_t{0}) } -> std::convertible_to<float>;
  c.global(b).store(int64_t{0}, 1.0f);
  { c.global(cb).extent() } -> std::convertible_to<int64_t>;
  c.template registers<fvec<4>>();
  c.lane_sum(c.template registers<fvec<4>>(), 4);
};

// Whether body K waits for the previous launch itself (ctx.wait_prior_launch()).
template <class K>
HEADROOM_HOST_DEVICE constexpr bool waits_for_prior_launch() {
  if constexpr (requires { K::waits_for_prior_launch; })
    return K::waits_for_prior_launch;
  else
    return false;
}

// Helpers that read better in bodies than ctx.template ...<T>().
template <class T, class Ctx>
HEADROOM_HOST_DEVICE auto make_registers(Ctx& ctx) {
  return ctx.template registers<T>();
}

}  // namespace headroom
