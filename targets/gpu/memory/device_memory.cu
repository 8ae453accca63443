// device_memory: exact allocations or a guarded arena (its bands: guard_bands.cuh), uploads, poison.
#include "targets/gpu/memory/device_memory.hpp"

#include <thrust/device_malloc.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/functional.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include "targets/gpu/launch/cuda_try.hpp"
#include "targets/gpu/memory/fill_ops.cuh"
#include "targets/gpu/memory/guard_bands.cuh"
#include "targets/gpu/worker/serve.hpp"

namespace headroom::gpu {

using namespace bands;

namespace {

int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// The band table sits after the check results in the meta allocation.
band_table table_in(const std::byte* meta, int n_bands) {
  return {
      reinterpret_cast<const band_range*>(meta + device_memory::max_checked_launches * sizeof(band_stats)),
      n_bands};
}

// Pinned host slots for the check results, one set per thread and allocated once (a pinned
// allocation costs more than a whole run), so their read-back is asynchronous and shares the
// output's synchronisation. Freed at thread exit; a lost context's error there is ignored.
band_stats* pinned_results() {
  thread_local struct holder {
    band_stats* p = nullptr;
    ~holder() {
      if (p) (void)cudaFreeHost(p);
    }
  } h;
  if (!h.p)
    HEADROOM_CUDA_TRY(cudaMallocHost(reinterpret_cast<void**>(&h.p),
                                     device_memory::max_checked_launches * sizeof(band_stats)));
  return h.p;
}

// A device block kept per thread from run to run, grow-only, owned by one device_memory at a time
// and given back when it dies: a guarded arena with its meta in front (check results and band
// table, then a gap, then the arena, so that no overrun forward of a buffer can reach the table).
// cudaMalloc maps fresh pages (tens of microseconds for a few MiB) and cudaFree synchronises the
// device, so a set-up allocates only when the kept block is smaller. Freed at thread exit (errors
// ignored: the context may be gone by then).
// A block is kept per campaign batch in flight (serve.hpp), each with its arena.
struct kept_block {
  static constexpr int slots = max_batches_in_flight;
  std::byte* p[slots] = {};
  std::size_t bytes[slots] = {};
  ~kept_block() {
    for (auto* q : p) (void)cudaFree(q);
  }
  // At least n bytes, handed over: the caller gives it back with put(). The smallest kept block
  // that is large enough; else a new one in a free slot or in place of the smallest.
  std::byte* take(std::size_t n, std::size_t& got) {
    int best = -1;
    for (int i = 0; i < slots; ++i)
      if (p[i] && bytes[i] >= n && (best < 0 || bytes[i] < bytes[best])) best = i;
    if (best < 0) {
      int spare = 0;
      for (int i = 0; i < slots; ++i)
        if (!p[i] || (p[spare] && bytes[i] < bytes[spare])) spare = i;
      (void)cudaFree(p[spare]);
      p[spare] = thrust::device_malloc<std::byte>(n).get();
      bytes[spare] = n;
      best = spare;
    }
    std::byte* q = p[best];
    got = bytes[best];
    p[best] = nullptr, bytes[best] = 0;
    return q;
  }
  void put(std::byte* q, std::size_t n) {  // into a free slot, else in place of a smaller block
    int at = 0;
    for (int i = 0; i < slots; ++i)
      if (!p[i] || bytes[i] < bytes[at]) at = i;
    if (p[at] && bytes[at] >= n) return (void)cudaFree(q);
    (void)cudaFree(p[at]);
    p[at] = q, bytes[at] = n;
  }
};
thread_local kept_block kept_arena, kept_stage;  // the arena; the staged uploads

std::vector<const wire_buffer*> addresses(const std::vector<wire_buffer>& bufs) {
  std::vector<const wire_buffer*> out;
  for (const auto& b : bufs) out.push_back(&b);
  return out;
}

// A device array for the rare attribution path (uninitialised; a thrust::device_vector would fill
// it on the default stream, unordered with this non-blocking one).
template <class T>
struct scratch {
  thrust::device_ptr<T> p;
  explicit scratch(std::size_t n) : p(thrust::device_malloc<T>(n)) {}
  ~scratch() { (void)cudaFree(p.get()); }  // never throws (thrust::device_free does, after a fault)
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
};

}  // namespace

device_memory::device_memory(const std::vector<wire_buffer>& bufs, bool guarded, const guard_options& g,
                             cudaStream_t s)
    : device_memory(addresses(bufs), guarded, g, s) {}

device_memory::device_memory(std::vector<const wire_buffer*> bufs, bool guarded, const guard_options& g,
                             cudaStream_t s, const std::vector<std::size_t>& groups)
    : stream_(s), bufs_(std::move(bufs)) {
  for (const wire_buffer* b : bufs_) {
    if (b->elem_bytes <= 0 || b->extent < 0)
      throw std::invalid_argument("gpu buffer " + b->name + ": bad size");
    const auto sent = static_cast<int64_t>(b->data.size());
    if (b->gen != value_gen::none) {
      if (b->scratch || sent != 0 || b->elem_bytes != (b->gen_type == elem_type::f32 ? 4 : 2) ||
          (b->gen == value_gen::packed_kv && b->row <= 0))
        throw std::invalid_argument("gpu buffer " + b->name + ": a generated input with bytes or a bad type");
    } else if (b->scratch ? sent > b->elem_bytes * b->extent || sent % b->elem_bytes != 0
                          : sent != b->elem_bytes * b->extent) {
      throw std::invalid_argument("gpu buffer " + b->name + ": data size does not match its extent");
    }
  }
  try {
    set_up(guarded, g, groups);
  } catch (...) {
    release();
    throw;
  }
}

void device_memory::set_up(bool guarded, const guard_options& g, const std::vector<std::size_t>& groups) {
  // Pageable copies: each returns once its source is staged (cudaMemcpyBatchAsync, which reads the
  // sources in stream order, made the set-up slower on the H200: docs/gpu.md).
  const auto upload = [&](void* d, const void* h, std::size_t n) {
    if (n > 0) HEADROOM_CUDA_TRY(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, stream_));
  };
  std::vector<std::byte> meta;  // guarded: the check results (clean), then the band table
  if (guarded) {
    slots_ = arena_layout(bufs_, g, arena_bytes_, groups);
    const auto bands = band_ranges(slots_, band_chunks_, band_owner_);
    bands_ = static_cast<int>(bands.size());
    meta.resize(max_checked_launches * sizeof(band_stats) + bands.size() * sizeof(band_range));
    const band_stats clean = no_change();
    for (int k = 0; k < max_checked_launches; ++k)
      std::memcpy(meta.data() + k * sizeof(band_stats), &clean, sizeof(clean));
    if (!bands.empty())
      std::memcpy(meta.data() + max_checked_launches * sizeof(band_stats), bands.data(),
                  bands.size() * sizeof(band_range));
    // [meta][gap: an underrun of up to this much below the first buffer cannot reach it][arena]
    const int64_t arena_at =
        round_up(static_cast<int64_t>(meta.size()), payload_alignment) + std::max(g.min_band, g.max_band);
    meta_ = kept_arena.take(static_cast<std::size_t>(arena_at + arena_bytes_), block_bytes_);
    arena_ = meta_ + arena_at;
    upload(meta_, meta.data(), meta.size());
    for (const auto& sl : slots_) ptrs_.push_back(arena_ + sl.start);
  } else {
    for (const wire_buffer* b : bufs_) {
      const auto bytes = static_cast<std::size_t>(b->elem_bytes * b->extent);
      std::byte* p = bytes ? thrust::device_malloc<std::byte>(bytes).get() : nullptr;
      owned_.push_back(p);
      ptrs_.push_back(p);
    }
  }
  fill_buffers(upload);
  if (guarded && band_chunks_ > 0) {
    const int64_t blocks = (band_chunks_ + prepare_span - 1) / prepare_span;
    prepare_arena<<<dim3(static_cast<unsigned>(blocks)), prepare_threads, 0, stream_>>>(
        arena_, table_in(meta_, bands_), band_chunks_);
    HEADROOM_CUDA_TRY(cudaGetLastError());
  }
}

// Every buffer's contents in one upload and one kernel (fill_ops.cuh): inputs up to max_staged
// bytes staged, larger ones copied directly; scratch poisoned over its host-written prefix;
// generated inputs made on the device.
template <class Upload>
void device_memory::fill_buffers(const Upload& upload) {
  constexpr int64_t max_staged = int64_t{1} << 20;
  std::vector<fill::op> ops;
  std::vector<std::byte> staged;
  int64_t tiles = 0;  // blocks of the launch
  for (std::size_t i = 0; i < bufs_.size(); ++i) {
    const wire_buffer& b = *bufs_[i];
    fill::op o;
    o.dst = static_cast<std::byte*>(ptrs_[i]);
    o.bytes = b.elem_bytes * b.extent;
    if (o.bytes == 0) continue;
    if (b.gen != value_gen::none) {
      o.kind = b.gen == value_gen::packed_kv ? fill::op_kind::gen_packed : fill::op_kind::gen_stream;
      o.type = b.gen_type, o.key = b.key, o.key_v = b.key_v, o.row = b.row;
    } else if (!b.scratch && o.bytes > max_staged) {
      upload(o.dst, b.data.data(), static_cast<std::size_t>(o.bytes));
      continue;
    } else {
      o.kind = b.scratch ? fill::op_kind::scratch : fill::op_kind::copy;
      o.src = static_cast<int64_t>(staged.size());
      o.src_bytes = static_cast<int64_t>(b.data.size());
      staged.insert(staged.end(), b.data.begin(), b.data.end());
      staged.resize(static_cast<std::size_t>(round_up(static_cast<int64_t>(staged.size()), 16)));
    }
    o.tile0 = tiles;
    tiles += fill::tiles_of(o.bytes);
    ops.push_back(o);
  }
  if (ops.empty()) return;
  const std::size_t ops_bytes =
      static_cast<std::size_t>(round_up(static_cast<int64_t>(ops.size() * sizeof(fill::op)), 16));
  std::vector<std::byte> host(ops_bytes + staged.size());
  std::memcpy(host.data(), ops.data(), ops.size() * sizeof(fill::op));
  if (!staged.empty()) std::memcpy(host.data() + ops_bytes, staged.data(), staged.size());
  stage_ = kept_stage.take(host.size(), stage_bytes_);
  upload(stage_, host.data(), host.size());
  if (tiles > std::numeric_limits<int32_t>::max() || ops.size() > std::numeric_limits<int32_t>::max())
    throw std::invalid_argument("gpu buffers: too many bytes to fill in one launch");
  fill::run_ops<<<static_cast<unsigned>(tiles), 256, 0, stream_>>>(
      reinterpret_cast<const fill::op*>(stage_), static_cast<int>(ops.size()), stage_ + ops_bytes);
  HEADROOM_CUDA_TRY(cudaGetLastError());
}

// Frees are not checked: after a lost context they fail, and the worker exits anyway. The arena's
// block (meta in front) goes back to this thread.
void device_memory::release() {
  for (std::byte* p : owned_)
    if (p) cudaFree(p);
  owned_.clear();
  if (meta_ || stage_) (void)cudaStreamSynchronize(stream_);  // the stream's work on the blocks is done
  if (meta_) kept_arena.put(meta_, block_bytes_);
  if (stage_) kept_stage.put(stage_, stage_bytes_);
  arena_ = meta_ = stage_ = nullptr;
}

device_memory::~device_memory() { release(); }

void device_memory::check_guards(int32_t launch) {
  if (!arena_) return;
  if (launch < 0 || launch >= max_checked_launches) throw std::invalid_argument("guard check: launch index");
  if (band_chunks_ > 0) {
    // Programmatic serialization: the check's blocks become resident and read the band table while
    // the launch before it finishes, and read the bands once it has (griddepcontrol.wait).
    const launch_config lc(dim3(static_cast<unsigned>((band_chunks_ + check_span - 1) / check_span)),
                           dim3(check_threads), 0, stream_, true);
    HEADROOM_CUDA_TRY(cudaLaunchKernelEx(&lc.cfg, check_bands, static_cast<const std::byte*>(arena_),
                                         table_in(meta_, bands_), band_chunks_,
                                         reinterpret_cast<band_stats*>(meta_) + launch));
  }
  checks_ = std::max(checks_, launch + 1);
}

std::vector<std::byte> device_memory::finish(std::vector<guard_report>& into, int32_t download_id) {
  const int32_t checks = arena_ ? checks_ : 0;
  checks_ = 0;  // the next check starts a new sequence of launches
  band_stats* seen = checks > 0 ? pinned_results() : nullptr;
  if (seen)
    HEADROOM_CUDA_TRY(
        cudaMemcpyAsync(seen, meta_, checks * sizeof(band_stats), cudaMemcpyDeviceToHost, stream_));
  std::vector<std::byte> out = download(download_id);  // behind the results on the stream
  if (!seen) return out;
  HEADROOM_CUDA_TRY(cudaStreamSynchronize(stream_));  // returns at once after a download
  const auto dirty = std::find_if(seen, seen + checks, [](const band_stats& b) { return b.count > 0; });
  if (dirty == seen + checks) return out;  // the usual case: every result slot is still clean
  attribute(static_cast<int32_t>(dirty - seen), into);
  std::fill(seen, seen + checks, no_change());  // clean slots for the next sequence
  HEADROOM_CUDA_TRY(
      cudaMemcpyAsync(meta_, seen, checks * sizeof(band_stats), cudaMemcpyHostToDevice, stream_));
  HEADROOM_CUDA_TRY(cudaStreamSynchronize(stream_));
  return out;
}

// Canary bytes changed: which buffers' bands. One Thrust reduction by key over every band chunk
// (key: its band) gives each band's changed bytes; a buffer owns its before band and the canary part
// of its after band. Only on this rare path, so its allocations do not matter.
void device_memory::attribute(int32_t launch, std::vector<guard_report>& into) {
  const band_table t = table_in(meta_, bands_);
  const auto n = static_cast<std::size_t>(bands_);
  const scratch<int> keys(n);
  const scratch<band_stats> per_band(n);
  const thrust::counting_iterator<int64_t> i0(0);
  const auto ends = thrust::reduce_by_key(
      thrust::cuda::par.on(stream_), thrust::make_transform_iterator(i0, band_of_chunk{t}),
      thrust::make_transform_iterator(i0 + band_chunks_, band_of_chunk{t}),
      thrust::make_transform_iterator(i0, chunk_changes{arena_, t}), keys.p, per_band.p,
      thrust::equal_to<int>(), band_stats_sum{});
  if (ends.first - keys.p != bands_) throw std::logic_error("guard attribution: a band without chunks");
  std::vector<band_stats> seen(n);
  HEADROOM_CUDA_TRY(cudaMemcpyAsync(seen.data(), per_band.p.get(), n * sizeof(band_stats),
                                    cudaMemcpyDeviceToHost, stream_));
  HEADROOM_CUDA_TRY(cudaStreamSynchronize(stream_));
  std::vector<band_stats> per_slot(slots_.size(), no_change());
  for (std::size_t k = 0; k < n; ++k) {
    auto& s = per_slot[static_cast<std::size_t>(band_owner_[k])];
    s = band_stats_sum{}(s, seen[k]);
  }
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const auto id = static_cast<int32_t>(i);
    const band_stats& s = per_slot[i];
    if (s.count == 0 ||
        std::any_of(into.begin(), into.end(), [&](const guard_report& r) { return r.buffer == id; }))
      continue;
    into.push_back(
        {id, launch, static_cast<int64_t>(s.count), s.first - slots_[i].start, s.last - slots_[i].start});
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
