// The simulator's kernel context (the checked executor of docs/design.md "One kernel body, two
// executors"); the interface it implements is documented in core/sim/context.hpp.
//
// Execution strategy: a block runs as phases between barriers. Block-uniform code (the body itself)
// runs once per block; ctx.threads(f) runs f for every thread of the block in linear order;
// ctx.sync() ends an epoch. State a thread keeps across a barrier lives in ctx.registers<T>() (one T
// per thread). Barrier semantics are real although threads of one epoch run one after the other:
// shared memory is tracked per granule (shared_view), so a read of another thread's write from the
// same epoch sees poison and is recorded, as is a write over another thread's read. Shared memory
// is poisoned by epoch, per block and per launch: a granule no thread of the current block wrote
// reads as poison and counts as an uninitialized read (no memset per block or per launch).
// Why phases and not fibers, measured before choosing (g++ 12 -O2, the 2-core development VM, a
// 256-thread block doing 4 x {checked tile load, barrier, 16 checked shared reads, barrier}):
//   phases 219 us/block; fibers with a hand-written x86-64 stack switch 398-428 us/block (256 stacks
//   thrash the caches, ~40 ns a switch); fibers with ucontext 2035-2083 us/block (a signal-mask
//   syscall per switch). Phases are also portable, need no stacks, and inline the whole body.
// Cost of the checks (bench/bench_sim.cpp): checked runs take 1.5-1.7x the time of the same bodies
// on native_context (1.8x the instructions, counted with callgrind).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/sim/arena.hpp"
#include "core/sim/device_types.hpp"
#include "core/sim/memory.hpp"
#include "core/sim/sim_views.hpp"
#include "core/sim/warp_ops.hpp"

namespace headroom::sim {

struct launch_options {
  int64_t max_violations = 1 << 20;  // stop between blocks after this many records of any kind
};

struct launch_result {
  launch_dim grid, block;
  int64_t blocks_run = 0;
  int64_t barriers = 0;
  bool aborted = false;
};

// The largest block the simulator accepts (CUDA's limit).
inline constexpr int64_t max_block_threads = 1024;
// The widest lane group lane_sum accepts: one warp.
inline constexpr int warp_size = 32;

// Shared memory of a launch and its tags (sim_context.cpp keeps one per thread across launches).
struct smem_buffers {
  std::byte* mem = nullptr;
  std::size_t bytes = 0;
  std::vector<uint64_t> wtag, rtag;
  uint64_t epoch = 0;  // the last barrier epoch of the previous launch
  smem_buffers() = default;
  smem_buffers(const smem_buffers&) = delete;
  smem_buffers& operator=(const smem_buffers&) = delete;
  ~smem_buffers();
  void reserve(std::size_t alloc);  // at least alloc bytes; start over before epochs could wrap
};

class sim_context {
 public:
  sim_context(memory& m, launch_dim grid, launch_dim block, std::size_t smem_bytes, const launch_options& o);
  ~sim_context();
  sim_context(const sim_context&) = delete;
  sim_context& operator=(const sim_context&) = delete;

  // ---- the Ctx interface (context.hpp)
  launch_dim block_idx() const { return block_idx_; }
  launch_dim grid_dim() const { return grid_; }
  launch_dim block_dim() const { return block_; }

  template <class F>
  void threads(F&& f) {
    if (in_threads_) return misuse("threads() called inside threads()");
    in_threads_ = true;
    thread_idx t;
    for (t.z = 0; t.z < block_.z; ++t.z)
      for (t.y = 0; t.y < block_.y; ++t.y)
        for (t.x = 0; t.x < block_.x; ++t.x, ++t.linear) {
          hot_.tid = static_cast<uint32_t>(t.linear);
          f(static_cast<const thread_idx&>(t));
        }
    in_threads_ = false;
    hot_.tid = uniform_tid;
  }

  void sync() {
    if (in_threads_) return misuse("sync() inside threads(): a barrier in thread-divergent code");
    ++hot_.epoch;
    ++barriers_;
  }

  // A default (null) buffer_ref gives an empty view: every access through it is out of bounds.
  template <class T>
  global_view<T> global(buffer_ref<T> r) {
    if (r.id < 0 && r.data == nullptr) return global_view<T>(nullptr, 0, &null_buffer_, &hot_);
    sim_buffer* b = checked_buffer(r.id, r.data, r.extent, r.offset);
    if (!b) return global_view<T>(r.data, 0, &bad_buffer_, &hot_);
    if (!waited_ && b->track_init && b->host_prefix == 0) [[unlikely]]  // a partly host-written input
      view_before_wait(*b);                                             // is no launch's output
    return global_view<T>(r.data, r.extent, b, &hot_, r.offset);
  }

  template <int G = 1, class T, std::size_t N>
  shared_view<T, G> shared(T (&a)[N], const char* name) {
    return shared<G>(a, static_cast<int64_t>(N), name);
  }
  // A view of the first n elements of a (whole granules): the part a launch of this shape uses.
  template <int G = 1, class T, std::size_t N>
  shared_view<T, G> shared(T (&a)[N], int64_t n, const char* name) {
    static_assert(N % G == 0, "a shared array must hold whole granules");
    const auto off = reinterpret_cast<const std::byte*>(&a[0]) - smem_;
    if (off < 0 || static_cast<std::size_t>(off) + sizeof(a) > smem_bytes_ || off % 2 != 0) {
      misuse(std::string("shared(") + name + "): array is not in shared_storage");
      return shared_view<T, G>(a, 0, wtag_, rtag_, name, &hot_);
    }
    if (n < 0 || n > static_cast<int64_t>(N) || n % G != 0) {
      misuse(std::string("shared(") + name + "): " + std::to_string(n) + " elements of an array of " +
             std::to_string(N));
      return shared_view<T, G>(a, 0, wtag_, rtag_, name, &hot_);
    }
    return shared_view<T, G>(a, n, wtag_ + off / 2, rtag_ + off / 2, name, &hot_);
  }

  template <class T>
  registers_view<T> registers() {
    static_assert(std::is_trivially_copyable_v<T>, "registers hold plain values");
    static_assert(alignof(T) <= 16, "registers are 16-byte aligned");
    return {static_cast<T*>(arena_.alloc(sizeof(T) * static_cast<std::size_t>(nthreads_)))};
  }

  // Butterfly sum / maximum over groups of `width` lanes `stride` apart (offsets width/2 * stride
  // .. stride, the order __shfl_xor_sync uses, so the simulator and the GPU produce the same bits);
  // every thread of a group gets the group's result.
  template <int N>
  void lane_sum(registers_view<fvec<N>> r, int width, int stride = 1) {
    if (collective_ok("lane_sum", width * stride))
      lane_butterfly(r, nthreads_, width, stride, [](float a, float b) { return a + b; });
  }
  template <int N>
  void lane_max(registers_view<fvec<N>> r, int width, int stride = 1) {
    if (collective_ok("lane_max", width * stride))
      lane_butterfly(r, nthreads_, width, stride, [](float a, float b) { return std::fmax(a, b); });
  }
  // Tensor-core product and 8x8 transpose per warp (warp_ops.hpp has the fragment layouts).
  template <class T, class R, class Sel>
  void mma_m16n8k16(registers_view<R> r, Sel sel) {
    if (collective_ok("mma_m16n8k16", warp_size)) emulate_mma<T>(r, nthreads_, sel);
  }
  template <int N, class R, class Sel>
  void transpose8x8(registers_view<R> r, Sel sel) {
    if (collective_ok("transpose8x8", warp_size)) emulate_transpose8x8<N>(r, nthreads_, sel);
  }

  // ldmatrix[.trans] per warp: every lane's row is read through the shared view as that thread's
  // aligned 16-byte load (bounds, alignment, barrier discipline), then the warp's rows are dealt out.
  template <int N, bool Trans, class SV, class R, class Sel>
  void ldmatrix(const SV& v, registers_view<R> r, Sel sel) {
    static_assert(sizeof(typename SV::value_type) == 2, "ldmatrix moves 16-bit elements");
    if (!collective_ok("ldmatrix", warp_size)) return;
    emulate_ldmatrix<N, Trans>(block_, r, [&](const thread_idx& t, R& x, uint16_t* row) {
      hot_.tid = static_cast<uint32_t>(t.linear);
      const matrix_row m = sel(t, x);
      if (row) {
        const auto e = v.template load_vec_aligned<8>(m.offset);
        std::memcpy(row, &e, 8 * sizeof(uint16_t));
      }
      return m.regs;
    });
    hot_.tid = uniform_tid;
  }

  static constexpr bool has_wgmma = true;  // ctx.wgmma is emulated
  // wgmma per warpgroup (warp_ops.hpp): B is read through the shared view as 16-byte loads at
  // their swizzled places (sw128_at: bounds, alignment, barrier discipline). Whole warpgroups only.
  template <class T, int N, bool MN, int KS, class SV, class R, class Sel>
  void wgmma(const SV& v, int64_t lbo, registers_view<R> r, Sel sel) {
    static_assert(sizeof(typename SV::value_type) == 2, "wgmma's B is 16-bit");
    if (!collective_ok("wgmma", warp_size)) return;
    if (nthreads_ % (4 * warp_size) != 0)
      return misuse("wgmma(): " + std::to_string(nthreads_) + " threads are not whole warpgroups");
    emulate_wgmma<T, N, MN, KS>(r, nthreads_, v, lbo, sel);
  }
  // The products were computed when issued: waiting is only checked for its place.
  template <int P, class R, class Pins>
  void wgmma_wait(registers_view<R>, Pins) {
    if (in_threads_) misuse("wgmma_wait() inside threads(): it is block-uniform");
  }
  // Orders shared-memory writes before wgmma's reads on a GPU; nothing to do here. Block-uniform.
  void fence_async_proxy() {
    if (in_threads_) misuse("fence_async_proxy() inside threads(): it is block-uniform");
  }

  // Asynchronous copies global -> shared (cp.async on a GPU): the source is read and checked now
  // (bounds, touched extent, alignment, as load_vec_aligned), the destination is written now but
  // reads as never written (shared_view::begin_async_store) until a wait completes the copy's
  // group. Commit and wait are block-uniform (every thread commits / waits), like sync().
  template <int N, class SV, class GV>
  void copy_async(const SV& dst, int64_t di, const GV& src, int64_t si) {
    using T = typename SV::value_type;
    static_assert(std::is_same_v<T, typename GV::value_type>, "copy_async copies one element type");
    static_assert(N * sizeof(T) == 4 || N * sizeof(T) == 8 || N * sizeof(T) == 16,
                  "an asynchronous copy moves 4, 8 or 16 bytes");
    if (!in_threads_) return misuse("copy_async() outside threads()");
    const auto claim = dst.template begin_async_store<N>(di, src.template load_vec_aligned<N>(si));
    if (claim.tag) pending_.push_back({claim.tag, claim.granules, claim.stride, async_groups_, hot_.tid});
  }
  void async_commit() {
    if (in_threads_) return misuse("async_commit() inside threads(): it is block-uniform");
    ++async_groups_;
  }
  // Until at most P committed groups are outstanding: the older groups' copies land.
  template <int P>
  void async_wait() {
    if (in_threads_) return misuse("async_wait() inside threads(): it is block-uniform");
    land_copies(async_groups_ - P);
  }

  // The body may read what earlier launches wrote from here on (context.hpp); until then it may
  // open views of host-filled buffers only (global() records a misuse otherwise).
  void wait_prior_launch() {
    if (in_threads_) return misuse("wait_prior_launch() inside threads(): it is block-uniform");
    if (!body_waits_)
      return misuse("wait_prior_launch() in a body that does not declare waits_for_prior_launch");
    if (waited_) return misuse("wait_prior_launch() twice in one block");
    waited_ = true;
  }

  // a * b + c in 32 bits (context.hpp); a wrap is counted in the log's index_overflows.
  int64_t offset32(int64_t a, int64_t b, int64_t c = 0) {
    if (wraps32_mad(a, b, c)) [[unlikely]]
      note_index_overflow(a, b, c);
    return wrap32_mad(a, b, c);
  }

  // ---- the launcher's side (launch.hpp)
  void body_waits_for_prior_launch() { body_waits_ = true; }
  std::byte* shared_base() { return smem_; }
  bool begin_block(launch_dim b);  // false once the launch is aborted
  launch_result finish();

  // ---- used by the cold paths of the views (sim_context.cpp)
  memory& mem() { return mem_; }
  uint32_t current_tid() const { return hot_.tid; }
  void misuse(const std::string& what);
  void coords(uint32_t tid, int64_t out[3]) const;  // -1: block-uniform, -2: several threads
  void block_coords(int64_t out[3]) const;
  void note_violation();
  void note_index_overflow(int64_t a, int64_t b, int64_t c);

 private:
  struct pending_copy {  // the destination granules' write tags, re-tagged when the copy lands
    uint64_t* tag;
    int64_t granules, stride, group;
    uint32_t tid;
  };
  void land_copies(int64_t before_group);  // lands the copies of groups < before_group
  void end_async();                        // block end: copies never waited for are a misuse
  // The buffer `id` names, when the view (data, extent) is its part from element `offset` to its end.
  sim_buffer* checked_buffer(int32_t id, const void* data, int64_t extent, int64_t offset);
  void view_before_wait(const sim_buffer& b);
  bool collective_ok(const char* op, int span);  // outside threads(), whole lane groups

  memory& mem_;
  launch_dim grid_, block_, block_idx_;
  int nthreads_ = 0;
  launch_options opt_;
  hot_state hot_;
  bool in_threads_ = false;
  bool body_waits_ = false;  // the body calls wait_prior_launch() (launch.hpp)
  bool waited_ = true;       // this block may read what earlier launches wrote
  int64_t barriers_ = 0, blocks_run_ = 0;
  int64_t violations_at_start_ = 0;
  std::byte* smem_ = nullptr;
  std::size_t smem_bytes_ = 0;
  uint64_t* wtag_ = nullptr;  // write and read tags per 2 bytes of shared memory
  uint64_t* rtag_ = nullptr;
  bool pooled_ = false;  // smem_ and the tags are the thread's pool (else own_)
  smem_buffers own_;
  register_arena arena_;               // registers, reset per block
  std::vector<pending_copy> pending_;  // in issue order (so in group order)
  std::size_t pending_head_ = 0;       // pending_[0, head) have landed
  int64_t async_groups_ = 0;           // groups committed in this block
  sim_buffer bad_buffer_;              // target of views whose buffer_ref is not this memory's
  sim_buffer null_buffer_;             // target of views of a null buffer_ref
};

}  // namespace headroom::sim
