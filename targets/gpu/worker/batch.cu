// A campaign batch on the device (worker.hpp begin_batch / end_batch): every case's buffers in one
// guarded arena (inputs made on the device, device_memory), the cases' launches gathered into one
// launch per kernel and launch step (case_batch.hpp), then the output check of every attention case
// (batch_verdict.cuh), one guard check over every band and one read-back, all on one stream with
// no host synchronisation; end_batch waits for that and makes the verdicts.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "targets/gpu/launch/cuda_try.hpp"
#include "targets/gpu/launch/dispatch.hpp"
#include "targets/gpu/memory/device_memory.hpp"
#include "targets/gpu/worker/batch_verdict.cuh"
#include "targets/gpu/worker/serve.hpp"
#include "targets/gpu/worker/worker.hpp"

namespace headroom::gpu {
namespace {

using clock_type = std::chrono::steady_clock;
double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

// A device array for one batch, from the stream-ordered allocator: neither its allocation nor its
// release waits for the device (cudaFree would, and the next batch must not wait for this one).
template <class T>
struct device_array {
  T* p = nullptr;
  cudaStream_t s = nullptr;
  device_array(std::size_t n, cudaStream_t stream) : s(stream) {
    if (n) HEADROOM_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&p), n * sizeof(T), s));
  }
  ~device_array() {
    if (p) (void)cudaFreeAsync(p, s);
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
};

// A pinned host array kept per stream pool (grow-only): the verdicts' read-back, asynchronous.
template <class T>
struct pinned_array {
  T* p = nullptr;
  std::size_t n = 0;
  ~pinned_array() { (void)cudaFreeHost(p); }
  T* at_least(std::size_t want) {
    if (want > n) {
      (void)cudaFreeHost(p);
      p = nullptr, n = 0;
      HEADROOM_CUDA_TRY(cudaMallocHost(reinterpret_cast<void**>(&p), want * sizeof(T)));
      n = want;
    }
    return p;
  }
};

// A stream and events, made once (creating them costs more than a small case).
struct stream_pool {
  cudaStream_t main = nullptr;
  cudaEvent_t mark[5] = {};  // timed: start, filled, cases done, verdicts done, guards checked
  pinned_array<batch::verdict_stats> seen;
  stream_pool() {
    for (auto& e : mark) HEADROOM_CUDA_TRY(cudaEventCreate(&e));
    HEADROOM_CUDA_TRY(cudaStreamCreateWithFlags(&main, cudaStreamNonBlocking));
  }
};

// A pool per batch in flight (serve.hpp), taken in turn: batches end in order, so a pool's batch has
// ended before the pool is taken again.
stream_pool& next_streams() {
  thread_local stream_pool pools[max_batches_in_flight];
  thread_local int turn = 0;
  stream_pool& p = pools[turn];
  turn = (turn + 1) % max_batches_in_flight;
  return p;
}

// A host copy of an int32 input's first n values, when the host sent them (empty otherwise).
std::vector<int32_t> host_ints(const wire_buffer& b, int64_t n) {
  std::vector<int32_t> out;
  if (b.scratch || b.gen != value_gen::none || b.elem_bytes != 4 || n < 1 ||
      static_cast<int64_t>(b.data.size()) < 4 * n)
    return out;
  out.resize(static_cast<std::size_t>(n));
  std::memcpy(out.data(), b.data.data(), out.size() * sizeof(int32_t));
  return out;
}

// The cases of element type T with a reference, as verdict jobs (stats: slot k of `stats`), and
// their work items (verdict_split.hpp): `items` gets each job's token offsets, `floats` counts the
// partial sums, `offsets` holds each job's place in both. The device pointers (items, parts) are set once
// those arrays exist.
struct job_offsets {
  std::size_t items = 0;
  int64_t floats = 0;
};
template <class T>
void add_jobs(const gpu_batch& b, const std::vector<std::vector<void*>>& ptrs, batch::verdict_stats* stats,
              std::vector<batch::verdict_job<T>>& jobs, std::vector<job_offsets>& offsets,
              std::vector<int64_t>& items, int64_t& rows, int64_t& n_items, int64_t& floats, elem_type type,
              int slots) {
  for (std::size_t i = 0; i < b.cases.size(); ++i) {
    const batch_case& c = b.cases[i];
    if (!c.compare || c.rq.type != type || batch::lane_slots_for(c.ref.head_size) != slots) continue;
    const reference_job& r = c.ref;
    const auto at = [&](int32_t id) -> void* {
      if (id < 0 || static_cast<std::size_t>(id) >= ptrs[i].size())
        throw std::invalid_argument("campaign batch: reference buffer id " + std::to_string(id));
      return ptrs[i][static_cast<std::size_t>(id)];
    };
    if (r.head_size < 1 || r.head_size > max_kernel_head_size || r.heads < 1 || r.kv_heads < 1 ||
        r.heads % r.kv_heads != 0 || r.tokens < 0 || r.seqs < 0)
      throw std::invalid_argument("campaign batch: a reference job with a bad geometry");
    batch::verdict_job<T> j;
    const T* k = static_cast<const T*>(at(r.kv));
    j.view = {static_cast<const T*>(at(r.q)),
              k,
              (r.v >= 0 ? static_cast<const T*>(at(r.v)) : k) + r.v_offset,
              static_cast<const int32_t*>(at(r.block_table)),
              static_cast<const int32_t*>(at(r.seq_lens)),
              static_cast<const int32_t*>(at(r.query_start)),
              r.heads,
              r.kv_heads,
              r.head_size,
              r.block_size,
              r.window,
              r.width,
              r.stride};
    j.out = static_cast<const T*>(at(r.output));
    j.seqs = r.seqs, j.tokens = r.tokens, j.rows = r.tokens * r.heads, j.row0 = rows;
    j.atol = r.atol, j.rtol = r.rtol, j.stats = stats + i;
    const auto lens = host_ints(c.rq.buffers[static_cast<std::size_t>(r.seq_lens)], r.seqs);
    const auto starts = host_ints(c.rq.buffers[static_cast<std::size_t>(r.query_start)], r.seqs + 1);
    const bool known = !lens.empty() && !starts.empty();
    const verdict_split split = split_verdict(known ? lens.data() : nullptr, known ? starts.data() : nullptr,
                                              r.seqs, r.tokens, r.heads, r.head_size, r.window);
    j.chunk = split.chunk, j.item0 = n_items;
    offsets.push_back({items.size(), floats});
    items.insert(items.end(), split.items.begin(), split.items.end());
    n_items += split.items.back();
    floats += split.items.back() * (r.head_size + 2);
    rows += j.rows;
    jobs.push_back(j);
  }
}

// The check of the cases of element type T whose rows take `slots` elements a lane.
template <class T, int slots>
void launch_verdicts_of(const gpu_batch& b, const std::vector<std::vector<void*>>& ptrs,
                        batch::verdict_stats* stats, elem_type type, cudaStream_t s,
                        std::vector<std::unique_ptr<device_array<std::byte>>>& keep) {
  std::vector<batch::verdict_job<T>> jobs;
  std::vector<job_offsets> at;
  std::vector<int64_t> items;
  int64_t rows = 0, n_items = 0, floats = 0;
  add_jobs<T>(b, ptrs, stats, jobs, at, items, rows, n_items, floats, type, slots);
  if (jobs.empty() || rows == 0) return;
  const auto array = [&](std::size_t bytes) {
    return reinterpret_cast<void*>(keep.emplace_back(std::make_unique<device_array<std::byte>>(bytes, s))->p);
  };
  auto* d_items = static_cast<int64_t*>(array(items.size() * sizeof(int64_t)));
  auto* d_parts = static_cast<float*>(array(static_cast<std::size_t>(floats) * sizeof(float)));
  auto* d_jobs = static_cast<batch::verdict_job<T>*>(array(jobs.size() * sizeof(jobs[0])));
  for (std::size_t i = 0; i < jobs.size(); ++i)
    jobs[i].items = d_items + at[i].items, jobs[i].parts = d_parts + at[i].floats;
  HEADROOM_CUDA_TRY(
      cudaMemcpyAsync(d_items, items.data(), items.size() * sizeof(int64_t), cudaMemcpyHostToDevice, s));
  HEADROOM_CUDA_TRY(
      cudaMemcpyAsync(d_jobs, jobs.data(), jobs.size() * sizeof(jobs[0]), cudaMemcpyHostToDevice, s));
  constexpr int64_t threads = batch::verdict_threads, warps = threads / 32;
  const auto blocks = [&](int64_t n) { return static_cast<unsigned>((n + warps - 1) / warps); };
  batch::verdict_parts<T, slots>
      <<<blocks(n_items), threads, 0, s>>>(d_jobs, static_cast<int>(jobs.size()), n_items);
  HEADROOM_CUDA_TRY(cudaGetLastError());
  batch::verdict_rows<T, slots><<<blocks(rows), threads, 0, s>>>(d_jobs, static_cast<int>(jobs.size()), rows);
  HEADROOM_CUDA_TRY(cudaGetLastError());
}

template <class T>
void launch_verdicts(const gpu_batch& b, const std::vector<std::vector<void*>>& ptrs,
                     batch::verdict_stats* stats, elem_type type, cudaStream_t s,
                     std::vector<std::unique_ptr<device_array<std::byte>>>& keep) {
  launch_verdicts_of<T, batch::lane_slots[0]>(b, ptrs, stats, type, s, keep);
  launch_verdicts_of<T, batch::lane_slots[1]>(b, ptrs, stats, type, s, keep);
  launch_verdicts_of<T, batch::lane_slots[2]>(b, ptrs, stats, type, s, keep);
  launch_verdicts_of<T, batch::lane_slots[3]>(b, ptrs, stats, type, s, keep);
}

}  // namespace

// One batch between begin_batch and end_batch: everything its enqueued work still uses.
struct batch_in_flight {
  gpu_batch b;
  stream_pool* sp = nullptr;
  std::vector<std::size_t> first;  // each case's first buffer in the arena's list
  std::unique_ptr<device_memory> mem;
  std::unique_ptr<device_array<batch::verdict_stats>> stats;
  // Launch entries, verdict jobs, items and partial sums.
  std::vector<std::unique_ptr<device_array<std::byte>>> arrays;
  gpu_batch_response resp;
  clock_type::time_point t0;
  bool failed = false;
};

namespace {

void enqueue(batch_in_flight& f) {
  const gpu_batch& b = f.b;
  stream_pool& sp = *f.sp;
  std::vector<const wire_buffer*> all;
  for (const auto& c : b.cases) {
    f.first.push_back(all.size());
    for (const auto& buf : c.rq.buffers) all.push_back(&buf);
  }
  const std::vector<std::size_t> groups(f.first.begin() + (f.first.empty() ? 0 : 1), f.first.end());
  HEADROOM_CUDA_TRY(cudaEventRecord(sp.mark[0], sp.main));
  f.mem = std::make_unique<device_memory>(all, true, b.guards, sp.main, groups);
  std::vector<std::vector<void*>> ptrs(b.cases.size());
  for (std::size_t i = 0; i < b.cases.size(); ++i)
    ptrs[i].assign(
        f.mem->pointers().begin() + static_cast<std::ptrdiff_t>(f.first[i]),
        f.mem->pointers().begin() + static_cast<std::ptrdiff_t>(f.first[i] + b.cases[i].rq.buffers.size()));
  f.stats = std::make_unique<device_array<batch::verdict_stats>>(b.cases.size(), sp.main);
  const std::vector<batch::verdict_stats> clean(b.cases.size());
  if (!clean.empty())
    HEADROOM_CUDA_TRY(cudaMemcpyAsync(f.stats->p, clean.data(), clean.size() * sizeof(clean[0]),
                                      cudaMemcpyHostToDevice, sp.main));
  HEADROOM_CUDA_TRY(cudaEventRecord(sp.mark[1], sp.main));
  f.resp.setup_ms = ms_since(f.t0);

  // Every case's launches join the batch's groups (case_batch.hpp), sent once all are known.
  const auto t1 = clock_type::now();
  f.resp.cases.resize(b.cases.size());
  case_batch launches;
  for (std::size_t i = 0; i < b.cases.size(); ++i) {
    launch_args a{&b.cases[i].rq, &ptrs[i], false, nullptr, sp.main, {}, &launches};
    try {
      launch_request(a);
    } catch (const std::invalid_argument& e) {  // this case's shape or params: the others go on
      f.resp.cases[i].faulted = true;
      f.resp.cases[i].fault = e.what();
    }
  }
  if (!launches.empty()) {
    const std::vector<std::byte> host = launches.entries();
    std::byte* d = f.arrays.emplace_back(std::make_unique<device_array<std::byte>>(host.size(), sp.main))->p;
    HEADROOM_CUDA_TRY(cudaMemcpyAsync(d, host.data(), host.size(), cudaMemcpyHostToDevice, sp.main));
    for (const case_group& g : launches.launch_order())
      g.launcher(d + g.at, g.n, g.stride, g.blocks, g.block, g.smem, sp.main);
  }
  HEADROOM_CUDA_TRY(cudaEventRecord(sp.mark[2], sp.main));
  launch_verdicts<float>(b, ptrs, f.stats->p, elem_type::f32, sp.main, f.arrays);
  launch_verdicts<bf16>(b, ptrs, f.stats->p, elem_type::bf16, sp.main, f.arrays);
  launch_verdicts<fp16>(b, ptrs, f.stats->p, elem_type::fp16, sp.main, f.arrays);
  HEADROOM_CUDA_TRY(cudaEventRecord(sp.mark[3], sp.main));
  f.mem->check_guards(0);
  HEADROOM_CUDA_TRY(cudaEventRecord(sp.mark[4], sp.main));
  if (!b.cases.empty())
    HEADROOM_CUDA_TRY(cudaMemcpyAsync(sp.seen.at_least(b.cases.size()), f.stats->p,
                                      b.cases.size() * sizeof(batch::verdict_stats), cudaMemcpyDeviceToHost,
                                      sp.main));
  f.resp.kernels_ms = ms_since(t1);
}

void collect(batch_in_flight& f) {
  const gpu_batch& b = f.b;
  stream_pool& sp = *f.sp;
  const auto t2 = clock_type::now();
  std::vector<guard_report> guards;
  (void)f.mem->finish(guards, -1);  // synchronises the main stream (behind every case stream)
  double* phase[] = {&f.resp.fill_gpu_ms, &f.resp.cases_gpu_ms, &f.resp.verdict_gpu_ms, &f.resp.guard_gpu_ms};
  for (int k = 0; k < 4; ++k) {
    float ms = 0;
    HEADROOM_CUDA_TRY(cudaEventElapsedTime(&ms, sp.mark[k], sp.mark[k + 1]));
    *phase[k] = ms;
  }
  const batch::verdict_stats* seen = sp.seen.p;
  for (std::size_t i = 0; i < b.cases.size(); ++i) {
    case_verdict& v = f.resp.cases[i];
    v.compared = b.cases[i].compare && !v.faulted;
    v.bad = static_cast<int64_t>(seen[i].bad), v.unwritten = static_cast<int64_t>(seen[i].unwritten);
    float worst = 0;
    std::memcpy(&worst, &seen[i].max_err_bits, sizeof(worst));
    v.max_abs_err = worst;
    v.first_bad = v.bad > 0 ? static_cast<int64_t>(seen[i].first_bad) : -1;
  }
  for (guard_report g : guards) {  // a global buffer id -> (case, its buffer id)
    const auto at = std::upper_bound(f.first.begin(), f.first.end(), static_cast<std::size_t>(g.buffer));
    const auto c = static_cast<std::size_t>(at - f.first.begin()) - 1;
    g.buffer -= static_cast<int32_t>(f.first[c]);
    f.resp.cases[c].guards.push_back(g);
  }
  f.resp.check_ms = ms_since(t2);
}

void fail(batch_in_flight& f, const std::exception& e) {
  f.failed = true;
  f.resp.cases.clear();
  f.resp.faulted = true;
  f.resp.fault = e.what();
  f.resp.worker_exiting = context_lost();
}

}  // namespace

std::shared_ptr<batch_in_flight> begin_batch(gpu_batch&& b) {
  auto f = std::make_shared<batch_in_flight>();
  f->b = std::move(b);
  f->t0 = clock_type::now();
  try {
    f->sp = &next_streams();
    enqueue(*f);
  } catch (const std::exception& e) {
    fail(*f, e);
  }
  return f;
}

gpu_batch_response end_batch(batch_in_flight& f) {
  if (!f.failed) {
    try {
      collect(f);
    } catch (const std::exception& e) {
      fail(f, e);
    }
  }
  f.mem.reset();  // the arena goes back to the kept blocks (after its stream is done)
  f.resp.total_ms = ms_since(f.t0);
  return std::move(f.resp);
}

}  // namespace headroom::gpu
