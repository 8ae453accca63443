// The CUDA worker (worker.hpp): device probe, one run per mode (buffers, launches, guard checks
// after every launch, the checked log, the output), and the request loop on pipes.
#include "targets/gpu/worker/worker.hpp"

#include <chrono>
#include <exception>
#include <limits>
#include <memory>
#include <string>

#include "targets/gpu/launch/cuda_try.hpp"
#include "targets/gpu/memory/device_memory.hpp"
#include "targets/gpu/launch/dispatch.hpp"
#include "targets/gpu/worker/serve.hpp"

namespace headroom::gpu {
namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

// The checked run's log, clean, with each buffer's initialised prefix: the host-written elements
// of a partly written scratch buffer (a planner's work list), everything elsewhere.
struct log_buffer {
  device_log* d = nullptr;
  log_buffer(const gpu_request& rq, cudaStream_t s) {
    auto h = std::make_unique<device_log>();
    for (int i = 0; i < max_log_buffers; ++i) h->init_end[i] = std::numeric_limits<long long>::max();
    for (std::size_t i = 0; i < rq.buffers.size() && i < static_cast<std::size_t>(max_log_buffers); ++i) {
      const wire_buffer& b = rq.buffers[i];
      if (b.scratch && !b.data.empty()) h->init_end[i] = static_cast<long long>(b.data.size()) / b.elem_bytes;
    }
    HEADROOM_CUDA_TRY(cudaMalloc(&d, sizeof(device_log)));
    HEADROOM_CUDA_TRY(cudaMemcpyAsync(d, h.get(), sizeof(device_log), cudaMemcpyHostToDevice, s));
  }
  ~log_buffer() { cudaFree(d); }
};

void read_log(const device_log* d, std::size_t nbuf, run_result& r, cudaStream_t s) {
  device_log h;
  HEADROOM_CUDA_TRY(cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, s));
  HEADROOM_CUDA_TRY(cudaStreamSynchronize(s));
  r.touched.assign(nbuf, -1);
  for (std::size_t i = 0; i < nbuf && i < static_cast<std::size_t>(max_log_buffers); ++i)
    if (h.used_mask & (1ull << i)) r.touched[i] = h.touched[i];
  r.oob_count = static_cast<int64_t>(h.oob_count);
  r.index_overflows = static_cast<int64_t>(h.index_overflows);
  r.uninitialized_reads = static_cast<int64_t>(h.uninitialized_reads);
  const auto kept = h.oob_count < max_log_records ? h.oob_count : max_log_records;
  r.oob.assign(h.rec, h.rec + kept);
}

void run_once(const gpu_request& rq, run_mode mode, cudaStream_t s, run_result& r) {
  const auto t0 = clock_type::now();
  r.mode = mode;
  device_memory mem(rq.buffers, mode != run_mode::plain, rq.guards, s);
  std::unique_ptr<log_buffer> dlog;
  if (mode == run_mode::checked) dlog = std::make_unique<log_buffer>(rq, s);
  HEADROOM_CUDA_TRY(cudaStreamSynchronize(s));
  r.setup_ms = ms_since(t0);
  // Each launch is synchronised (a fault is attributed to its launch); when guarded, its band check
  // is enqueued right behind it, inside the same synchronisation (the check starts on the device as
  // the launch ends: device_memory::check_guards), so kernels_ms holds both. The checks' results
  // come back with the output in one synchronisation (guard_ms, guarded: that read-back).
  auto t = clock_type::now();
  launch_args a{&rq, &mem.pointers(), mode == run_mode::checked, dlog ? dlog->d : nullptr, s, [&](int k) {
                  mem.check_guards(k);  // guarded only
                  HEADROOM_CUDA_TRY(cudaStreamSynchronize(s));
                  r.kernels_ms += ms_since(t);
                  t = clock_type::now();
                }};
  launch_request(a);
  if (dlog) read_log(dlog->d, rq.buffers.size(), r, s);
  const auto tg = clock_type::now();
  r.output = mem.finish(r.guards, rq.download);
  r.states = mem.download(rq.download_states);
  r.guard_ms = mem.guarded() ? ms_since(tg) : 0;
  r.total_ms = ms_since(t0);
}

struct stream_holder {
  cudaStream_t s = nullptr;
  stream_holder() { HEADROOM_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~stream_holder() { cudaStreamDestroy(s); }
};

}  // namespace

bool context_lost() {
  const cudaError_t e = cudaDeviceSynchronize();
  (void)cudaGetLastError();
  return e != cudaSuccess && (is_sticky(e) || cudaDeviceSynchronize() != cudaSuccess);
}

worker_hello probe_devices() noexcept {
  worker_hello h;
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    h.error = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    (void)cudaGetLastError();
    return h;
  }
  h.device_count = n;
  cudaDeviceProp p{};
  if (n > 0 && cudaGetDeviceProperties(&p, 0) == cudaSuccess) h.device_name = p.name;
  if (n == 0) h.error = "CUDA sees no device";
  return h;
}

gpu_response execute(const gpu_request& rq) {
  gpu_response resp;
  try {
    stream_holder stream;
    for (run_mode m : rq.modes) {
      run_result& r = resp.runs.emplace_back();
      r.mode = m;
      try {
        run_once(rq, m, stream.s, r);
      } catch (const std::exception& e) {
        r.faulted = true;
        r.fault = e.what();
        r.output.clear();
        if (context_lost()) {
          resp.worker_exiting = true;
          return resp;
        }
      }
    }
  } catch (const std::exception& e) {
    resp.error = e.what();
    resp.worker_exiting = context_lost();
  }
  return resp;
}

int worker_main(int in_fd, int out_fd, int device) {
  const worker_hello hello = probe_devices();
  if (!write_message(out_fd, encode(hello)) || hello.device_count == 0) return 0;
  if (cudaSetDevice(device) != cudaSuccess) return 3;
  return serve_requests(
      in_fd, out_fd,
      {execute, [](gpu_batch&& b) -> std::shared_ptr<void> { return begin_batch(std::move(b)); },
       [](void* f) { return end_batch(*static_cast<batch_in_flight*>(f)); }});
}

}  // namespace headroom::gpu
