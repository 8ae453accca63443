// Simulator context: block bookkeeping, the register arena, and the cold paths that record
// out-of-bounds accesses, uninitialized reads, races and misuse with block / thread attribution.
#include "core/sim/sim_context.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>

namespace headroom::sim {

namespace {
constexpr std::size_t smem_alignment = 128;  // as __shared__ storage on a GPU

std::size_t round_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

int64_t total_violations(const sim_log& l) {
  return l.oob_count + l.uninitialized_reads + l.races + l.misuse_count;
}
}  // namespace

// Shared memory and its per-2-byte tags, kept per thread across launches, so a launch costs no
// allocation and no fill (a fresh 100 KiB block page-faulted on every launch). Barrier epochs only
// grow across the pool's launches, so whatever an earlier launch left reads as never written
// (sim_views.hpp) and the bytes need no reset. Tags hold epochs in 32 bits: the pool starts over
// (tags cleared) before they could wrap. A second live context on the thread gets its own buffers.
smem_buffers::~smem_buffers() { std::free(mem); }

void smem_buffers::reserve(std::size_t alloc) {
  if (alloc > bytes) {
    std::free(mem);
    mem = static_cast<std::byte*>(std::aligned_alloc(smem_alignment, alloc));
    if (!mem) throw std::bad_alloc();
    bytes = alloc;
    std::fill(mem, mem + alloc, std::byte{0xFF});
    wtag.assign(alloc / 2 + 1, 0);
    rtag.assign(alloc / 2 + 1, 0);
    epoch = 0;
  }
  if (epoch > (uint64_t{1} << 31)) {
    std::fill(wtag.begin(), wtag.end(), 0);
    std::fill(rtag.begin(), rtag.end(), 0);
    epoch = 0;
  }
}

namespace {
thread_local smem_buffers pool;
thread_local bool pool_busy = false;
}  // namespace

sim_context::sim_context(memory& m, launch_dim grid, launch_dim block, std::size_t smem_bytes,
                         const launch_options& o)
    : mem_(m), grid_(grid), block_(block), opt_(o) {
  nthreads_ = static_cast<int>(block.count());
  smem_bytes_ = smem_bytes;
  pooled_ = !pool_busy;
  smem_buffers& sb = pooled_ ? pool : own_;
  pool_busy = pool_busy || pooled_;
  sb.reserve(round_up(std::max<std::size_t>(smem_bytes, 1), smem_alignment));
  smem_ = sb.mem;
  wtag_ = sb.wtag.data();
  rtag_ = sb.rtag.data();
  hot_.epoch = sb.epoch;
  hot_.ctx = this;
  bad_buffer_.name = "<buffer not in this memory>";
  null_buffer_.name = "<null buffer>";
  violations_at_start_ = total_violations(mem_.log);
}

sim_context::~sim_context() {
  (pooled_ ? pool : own_).epoch = hot_.epoch;
  if (pooled_) pool_busy = false;
}

void sim_context::land_copies(int64_t before_group) {
  while (pending_head_ < pending_.size() && pending_[pending_head_].group < before_group) {
    const pending_copy& c = pending_[pending_head_++];
    for (int64_t g = 0; g < c.granules; ++g) c.tag[g * c.stride] = hot_.epoch << 32 | c.tid;
  }
  if (pending_head_ == pending_.size()) {
    pending_.clear();
    pending_head_ = 0;
  }
}

void sim_context::end_async() {
  if (pending_head_ < pending_.size())
    misuse(std::to_string(pending_.size() - pending_head_) +
           " asynchronous copies were never waited for (async_wait) before the block ended");
  pending_.clear();
  pending_head_ = 0;
  async_groups_ = 0;
}

bool sim_context::begin_block(launch_dim b) {
  if (blocks_run_ > 0) end_async();
  if (mem_.log.aborted) return false;
  if (total_violations(mem_.log) - violations_at_start_ >= opt_.max_violations) {
    mem_.log.aborted = true;
    return false;
  }
  block_idx_ = b;
  waited_ = !body_waits_;
  ++hot_.epoch;  // shared memory written by earlier blocks now reads as poison (uninitialized)
  hot_.block_epoch = hot_.epoch;
  hot_.tid = uniform_tid;
  in_threads_ = false;
  arena_.reset();
  ++blocks_run_;
  return true;
}

launch_result sim_context::finish() {
  if (blocks_run_ > 0) end_async();
  mem_.shared_accesses += hot_.shared_accesses;
  hot_.shared_accesses = 0;
  return {grid_, block_, blocks_run_, barriers_, mem_.log.aborted};
}

void sim_context::view_before_wait(const sim_buffer& b) {
  misuse("global(" + b.name + ") before wait_prior_launch(): launches write this buffer, so the block may " +
         "read it only once the launch before has ended");
}

sim_buffer* sim_context::checked_buffer(int32_t id, const void* data, int64_t extent, int64_t offset) {
  if (id >= 0 && static_cast<std::size_t>(id) < mem_.size()) {
    sim_buffer& b = mem_.at(id);
    if (offset >= 0 && offset <= b.extent && b.extent - offset == extent &&
        b.data + offset * b.elem_bytes == static_cast<const std::byte*>(data))
      return &b;
  }
  misuse("global(): buffer_ref id " + std::to_string(id) + " does not name a buffer of this memory");
  return nullptr;
}

bool sim_context::collective_ok(const char* op, int span) {
  if (in_threads_) {
    misuse(std::string(op) + "() inside threads(): a collective in thread-divergent code");
    return false;
  }
  if (span < 1 || span > warp_size || (span & (span - 1)) != 0 || nthreads_ % span != 0) {
    misuse(std::string(op) + "(): lane group span " + std::to_string(span) +
           " is not a power of two <= 32 dividing " + std::to_string(nthreads_) + " threads");
    return false;
  }
  return true;
}

void sim_context::misuse(const std::string& what) {
  auto& l = mem_.log;
  ++l.misuse_count;
  if (static_cast<int64_t>(l.misuse.size()) < l.max_records) {
    int64_t b[3];
    block_coords(b);
    l.misuse.push_back(what + " (block " + std::to_string(b[0]) + "," + std::to_string(b[1]) + "," +
                       std::to_string(b[2]) + ")");
  }
}

void sim_context::note_index_overflow(int64_t a, int64_t b, int64_t c) {
  auto& l = mem_.log;
  if (l.index_overflows++ > 0) return;
  int64_t blk[3], thr[3];
  block_coords(blk);
  coords(hot_.tid, thr);
  l.first_index_overflow = std::to_string(a) + " * " + std::to_string(b) + " + " + std::to_string(c) +
                           " wraps 32 bits (block " + std::to_string(blk[0]) + "," + std::to_string(blk[1]) +
                           "," + std::to_string(blk[2]) + " thread " + std::to_string(thr[0]) + "," +
                           std::to_string(thr[1]) + "," + std::to_string(thr[2]) + ")";
}

void sim_context::coords(uint32_t tid, int64_t out[3]) const {
  if (tid == uniform_tid || tid == many_tid) {
    const int64_t v = tid == uniform_tid ? -1 : -2;
    out[0] = out[1] = out[2] = v;
    return;
  }
  out[0] = tid % block_.x;
  out[1] = (tid / block_.x) % block_.y;
  out[2] = tid / (block_.x * block_.y);
}

void sim_context::block_coords(int64_t out[3]) const {
  out[0] = block_idx_.x;
  out[1] = block_idx_.y;
  out[2] = block_idx_.z;
}

namespace {
void push_hazard(sim_context& c, hazard_kind k, const std::string& buffer, int64_t index, uint32_t other) {
  auto& l = c.mem().log;
  if (k == hazard_kind::uninitialized_read)
    ++l.uninitialized_reads;
  else
    ++l.races;
  const auto same =
      std::count_if(l.hazards.begin(), l.hazards.end(), [&](const sim_hazard& h) { return h.kind == k; });
  if (same >= l.max_records) return;
  sim_hazard h;
  h.kind = k;
  h.buffer = buffer;
  h.index = index;
  c.block_coords(h.block);
  c.coords(c.current_tid(), h.thread);
  c.coords(other, h.other_thread);
  l.hazards.push_back(std::move(h));
}

void push_oob(sim_context& c, const std::string& buffer, int64_t index, int64_t extent, bool write) {
  auto& l = c.mem().log;
  ++l.oob_count;
  if (static_cast<int64_t>(l.oob.size()) >= l.max_records) return;
  sim_access a;
  a.buffer = buffer;
  a.write = write;
  a.index = index;
  a.extent = extent;
  c.block_coords(a.block);
  c.coords(c.current_tid(), a.thread);
  l.oob.push_back(std::move(a));
}
}  // namespace

void record_oob(sim_context& c, sim_buffer& b, int64_t index, bool write) {
  ++b.stats.oob;
  push_oob(c, b.name, index, b.extent, write);
}

void record_misaligned(sim_context& c, sim_buffer& b, int64_t index, int64_t alignment) {
  c.misuse("load_vec_aligned(): " + b.name + " index " + std::to_string(index) + " is not " +
           std::to_string(alignment) + "-byte aligned");
}

void record_shared_misaligned(sim_context& c, const char* name, int64_t index, int64_t alignment) {
  c.misuse(std::string("shared:") + name + " index " + std::to_string(index) + " is not " +
           std::to_string(alignment) + "-byte aligned for a vector access");
}

void record_uninit(sim_context& c, sim_buffer& b, int64_t index) {
  ++b.stats.uninitialized;
  push_hazard(c, hazard_kind::uninitialized_read, b.name, index, uniform_tid);
}

void record_shared(sim_context& c, hazard_kind k, const char* name, int64_t index, uint32_t other) {
  push_hazard(c, k, std::string("shared:") + name, index, other);
}

void record_shared_oob(sim_context& c, const char* name, int64_t index, int64_t extent, bool write) {
  push_oob(c, std::string("shared:") + name, index, extent, write);
}

}  // namespace headroom::sim
