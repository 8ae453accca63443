// A campaign batch on the device (worker.hpp execute_batch): every case's buffers in one guarded
// arena (inputs made on the device, device_memory), the cases' launches spread over a few streams
// with no host synchronisation between them, then on the first stream the output check of every
// attention case (batch_verdict.cuh) and one guard check over every band, and one read-back.
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
#include "targets/gpu/worker/worker.hpp"

namespace headroom::gpu {
namespace {

using clock_type = std::chrono::steady_clock;
double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

constexpr int case_streams = 8;

// This thread's streams and events, made once (creating them costs more than a small case).
struct stream_pool {
  cudaStream_t main = nullptr, cases[case_streams] = {};
  cudaEvent_t ready = nullptr, done[case_streams] = {};
  stream_pool() {
    HEADROOM_CUDA_TRY(cudaStreamCreateWithFlags(&main, cudaStreamNonBlocking));
    HEADROOM_CUDA_TRY(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    for (int i = 0; i < case_streams; ++i) {
      HEADROOM_CUDA_TRY(cudaStreamCreateWithFlags(&cases[i], cudaStreamNonBlocking));
      HEADROOM_CUDA_TRY(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
    }
  }
};

stream_pool& streams() {
  thread_local stream_pool pool;
  return pool;
}

// A device array for one batch (freed when the batch ends; after a lost context the error is moot).
template <class T>
struct device_array {
  T* p = nullptr;
  explicit device_array(std::size_t n) {
    if (n) HEADROOM_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(T)));
  }
  ~device_array() { (void)cudaFree(p); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
};

// The cases of element type T with a reference, as verdict jobs (stats: slot k of `stats`).
template <class T>
void add_jobs(const gpu_batch& b, const std::vector<std::vector<void*>>& ptrs, batch::verdict_stats* stats,
              std::vector<batch::verdict_job<T>>& jobs, int64_t& rows, elem_type type) {
  for (std::size_t i = 0; i < b.cases.size(); ++i) {
    const batch_case& c = b.cases[i];
    if (!c.compare || c.rq.type != type) continue;
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
    j.seqs = r.seqs, j.rows = r.tokens * r.heads, j.row0 = rows;
    j.atol = r.atol, j.rtol = r.rtol, j.stats = stats + i;
    rows += j.rows;
    jobs.push_back(j);
  }
}

template <class T>
void launch_verdicts(const gpu_batch& b, const std::vector<std::vector<void*>>& ptrs,
                     batch::verdict_stats* stats, elem_type type, cudaStream_t s,
                     std::vector<std::unique_ptr<device_array<batch::verdict_job<T>>>>& keep) {
  std::vector<batch::verdict_job<T>> jobs;
  int64_t rows = 0;
  add_jobs<T>(b, ptrs, stats, jobs, rows, type);
  if (jobs.empty() || rows == 0) return;
  auto& d = keep.emplace_back(std::make_unique<device_array<batch::verdict_job<T>>>(jobs.size()));
  HEADROOM_CUDA_TRY(cudaMemcpyAsync(d->p, jobs.data(), jobs.size() * sizeof(jobs[0]), cudaMemcpyHostToDevice, s));
  constexpr int threads = 128;
  batch::verdict_rows<T><<<static_cast<unsigned>((rows + threads - 1) / threads), threads, 0, s>>>(
      d->p, static_cast<int>(jobs.size()), rows);
  HEADROOM_CUDA_TRY(cudaGetLastError());
}

}  // namespace

gpu_batch_response execute_batch(const gpu_batch& b) {
  gpu_batch_response resp;
  const auto t0 = clock_type::now();
  try {
    stream_pool& sp = streams();
    std::vector<const wire_buffer*> all;
    std::vector<std::size_t> first;
    for (const auto& c : b.cases) {
      first.push_back(all.size());
      for (const auto& buf : c.rq.buffers) all.push_back(&buf);
    }
    device_memory mem(all, true, b.guards, sp.main);
    std::vector<std::vector<void*>> ptrs(b.cases.size());
    for (std::size_t i = 0; i < b.cases.size(); ++i)
      ptrs[i].assign(mem.pointers().begin() + static_cast<std::ptrdiff_t>(first[i]),
                     mem.pointers().begin() + static_cast<std::ptrdiff_t>(first[i] + b.cases[i].rq.buffers.size()));
    device_array<batch::verdict_stats> stats(b.cases.size());
    std::vector<batch::verdict_stats> clean(b.cases.size());
    if (!clean.empty())
      HEADROOM_CUDA_TRY(cudaMemcpyAsync(stats.p, clean.data(), clean.size() * sizeof(clean[0]),
                                        cudaMemcpyHostToDevice, sp.main));
    HEADROOM_CUDA_TRY(cudaEventRecord(sp.ready, sp.main));
    for (auto* s : sp.cases) HEADROOM_CUDA_TRY(cudaStreamWaitEvent(s, sp.ready, 0));
    resp.setup_ms = ms_since(t0);

    const auto t1 = clock_type::now();
    resp.cases.resize(b.cases.size());
    for (std::size_t i = 0; i < b.cases.size(); ++i) {
      const launch_args a{&b.cases[i].rq, &ptrs[i], false, nullptr, sp.cases[i % case_streams], {}};
      try {
        launch_request(a);
      } catch (const std::invalid_argument& e) {  // this case's shape or params: the others go on
        resp.cases[i].faulted = true;
        resp.cases[i].fault = e.what();
      }
    }
    for (int k = 0; k < case_streams; ++k) {
      HEADROOM_CUDA_TRY(cudaEventRecord(sp.done[k], sp.cases[k]));
      HEADROOM_CUDA_TRY(cudaStreamWaitEvent(sp.main, sp.done[k], 0));
    }
    std::vector<std::unique_ptr<device_array<batch::verdict_job<float>>>> keep_f;
    std::vector<std::unique_ptr<device_array<batch::verdict_job<bf16>>>> keep_b;
    std::vector<std::unique_ptr<device_array<batch::verdict_job<fp16>>>> keep_h;
    launch_verdicts<float>(b, ptrs, stats.p, elem_type::f32, sp.main, keep_f);
    launch_verdicts<bf16>(b, ptrs, stats.p, elem_type::bf16, sp.main, keep_b);
    launch_verdicts<fp16>(b, ptrs, stats.p, elem_type::fp16, sp.main, keep_h);
    mem.check_guards(0);
    resp.kernels_ms = ms_since(t1);

    const auto t2 = clock_type::now();
    std::vector<batch::verdict_stats> seen(b.cases.size());
    if (!seen.empty())
      HEADROOM_CUDA_TRY(cudaMemcpyAsync(seen.data(), stats.p, seen.size() * sizeof(seen[0]),
                                        cudaMemcpyDeviceToHost, sp.main));
    std::vector<guard_report> guards;
    (void)mem.finish(guards, -1);  // synchronises the main stream (behind every case stream)
    for (std::size_t i = 0; i < b.cases.size(); ++i) {
      case_verdict& v = resp.cases[i];
      v.compared = b.cases[i].compare && !v.faulted;
      v.bad = static_cast<int64_t>(seen[i].bad), v.unwritten = static_cast<int64_t>(seen[i].unwritten);
      float worst = 0;
      std::memcpy(&worst, &seen[i].max_err_bits, sizeof(worst));
      v.max_abs_err = worst;
      v.first_bad = v.bad > 0 ? static_cast<int64_t>(seen[i].first_bad) : -1;
    }
    for (guard_report g : guards) {  // a global buffer id -> (case, its buffer id)
      const auto at = std::upper_bound(first.begin(), first.end(), static_cast<std::size_t>(g.buffer));
      const auto c = static_cast<std::size_t>(at - first.begin()) - 1;
      g.buffer -= static_cast<int32_t>(first[c]);
      resp.cases[c].guards.push_back(g);
    }
    resp.check_ms = ms_since(t2);
  } catch (const std::exception& e) {
    resp.cases.clear();
    resp.faulted = true;
    resp.fault = e.what();
    resp.worker_exiting = context_lost();
  }
  resp.total_ms = ms_since(t0);
  return resp;
}

}  // namespace headroom::gpu
