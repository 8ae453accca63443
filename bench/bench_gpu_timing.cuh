// How the GPU benchmarks time (bench_gpu_decode.cu, bench_gpu_prefill.cu): one stream, the L2
// flush before every timed interval (a memset of twice the device's L2, or with
// HEADROOM_BENCH_FLUSH=read a read of it; scripts/bench_sdpa.py takes the same variable), CUDA
// events around the launches only, Google Benchmark's manual time, the median of the iterations;
// the device-to-device copy bandwidth measured the same way; and the device set-up (skip, exit 0,
// without a device).
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "targets/gpu/launch/cuda_try.hpp"

namespace headroom::bench {

__device__ inline void fold(uint4& acc, const uint4& x) {
  acc.x ^= x.x, acc.y ^= x.y, acc.z ^= x.z, acc.w ^= x.w;
}

// Stores the fold only if it takes a value bf16 inputs never make: nothing is dead code, nothing
// is written.
__device__ inline void keep(const uint4& acc, uint4* sink) {
  if ((acc.x & acc.y & acc.z & acc.w) == 0xFFFFFFFFu) *sink = acc;
}

struct timer {
  cudaEvent_t a, b;
  timer() {
    HEADROOM_CUDA_TRY(cudaEventCreate(&a));
    HEADROOM_CUDA_TRY(cudaEventCreate(&b));
  }
  ~timer() { cudaEventDestroy(a), cudaEventDestroy(b); }
};

struct bench_device {
  cudaStream_t stream = nullptr;
  void* flush = nullptr;
  std::size_t flush_bytes = 0;
  double copy_bps = 0;  // measured device-to-device copy, bytes read + written per second
};
inline bench_device* dev = nullptr;

// The word the read kernels (flush by reading, read ceilings) store to only if their fold takes a
// value it cannot (keep), allocated once.
inline uint4* sink_word() {
  static uint4* sink = nullptr;
  if (!sink) HEADROOM_CUDA_TRY(cudaMalloc(&sink, sizeof(uint4)));
  return sink;
}

__global__ void read_flush_kernel(const uint4* p, int64_t n, uint4* sink) {
  uint4 acc{0, 0, 0, 0};
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    fold(acc, p[i]);
  keep(acc, sink);
}

// The flush writes twice L2's size (as triton's do_bench does), leaving dirty lines that are written
// back during the timed interval; HEADROOM_BENCH_FLUSH=read reads the buffer instead (clean lines:
// docs/bench.md compares the two).
inline void flush_l2(int i) {
  static const bool by_read = [] {
    const char* e = std::getenv("HEADROOM_BENCH_FLUSH");
    return e && std::string(e) == "read";
  }();
  if (!by_read) {
    HEADROOM_CUDA_TRY(cudaMemsetAsync(dev->flush, i & 0xFF, dev->flush_bytes, dev->stream));
    return;
  }
  read_flush_kernel<<<1024, 256, 0, dev->stream>>>(static_cast<const uint4*>(dev->flush),
                                                   static_cast<int64_t>(dev->flush_bytes / 16), sink_word());
  HEADROOM_CUDA_TRY(cudaGetLastError());
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// One timed interval: flush L2 (fill byte i), then `body` between t's two events; milliseconds.
template <class F>
float flushed_ms(const timer& t, int i, F&& body) {
  flush_l2(i);
  HEADROOM_CUDA_TRY(cudaEventRecord(t.a, dev->stream));
  body();
  HEADROOM_CUDA_TRY(cudaEventRecord(t.b, dev->stream));
  HEADROOM_CUDA_TRY(cudaEventSynchronize(t.b));
  float x = 0;
  HEADROOM_CUDA_TRY(cudaEventElapsedTime(&x, t.a, t.b));
  return x;
}

// Time `body` n times (after a flush each), return the median milliseconds.
template <class F>
double time_median_ms(int n, F&& body) {
  timer t;
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) ms.push_back(flushed_ms(t, i, body));
  return median(ms);
}

inline double measure_copy(std::size_t bytes) {
  void *src = nullptr, *dst = nullptr;
  HEADROOM_CUDA_TRY(cudaMalloc(&src, bytes));
  HEADROOM_CUDA_TRY(cudaMalloc(&dst, bytes));
  HEADROOM_CUDA_TRY(cudaMemset(src, 1, bytes));
  const auto copy = [&] {
    HEADROOM_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, dev->stream));
  };
  time_median_ms(3, copy);
  const double ms = time_median_ms(21, copy);
  cudaFree(src), cudaFree(dst);
  return 2.0 * static_cast<double>(bytes) / (ms * 1e-3);
}

// Google Benchmark's loop: flush L2, `body` between two events (manual time), then `after` outside
// the timed interval. Returns the median milliseconds (also the median_us counter).
template <class Body, class After>
double timed_loop(benchmark::State& state, Body&& body, After&& after) {
  timer t;
  std::vector<double> ms;
  int i = 0;
  for (auto _ : state) {
    const float x = flushed_ms(t, i++, body);
    after();
    ms.push_back(x);
    state.SetIterationTime(x * 1e-3);
  }
  const double med = median(ms);
  state.counters["median_us"] = med * 1e3;
  return med;
}

// The stream and the flush buffer of device 0, and with `copy` the copy bandwidth (1 GiB); false
// (after a message) when there is no device.
inline bool open_device(bench_device& st, const char* program, bool copy) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    (void)cudaGetLastError();
    std::printf("%s: no CUDA device, GPU benchmarks skipped\n", program);
    return false;
  }
  cudaDeviceProp prop{};
  HEADROOM_CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
  dev = &st;
  HEADROOM_CUDA_TRY(cudaStreamCreateWithFlags(&st.stream, cudaStreamNonBlocking));
  st.flush_bytes = 2 * static_cast<std::size_t>(prop.l2CacheSize);
  HEADROOM_CUDA_TRY(cudaMalloc(&st.flush, st.flush_bytes));
  HEADROOM_CUDA_TRY(cudaMemset(st.flush, 0, st.flush_bytes));
  if (copy) st.copy_bps = measure_copy(std::size_t{1} << 30);
  std::fprintf(stderr, "device %s, %d SMs, L2 %d MiB", prop.name, prop.multiProcessorCount,
               prop.l2CacheSize >> 20);
  if (copy) std::fprintf(stderr, ", copy %.3f TB/s (read + write)", st.copy_bps * 1e-12);
  std::fprintf(stderr, "\n");
  benchmark::AddCustomContext("device", prop.name);
  if (copy) benchmark::AddCustomContext("copy_TBps", std::to_string(st.copy_bps * 1e-12));
  return true;
}

inline void close_device(bench_device& st) {
  cudaFree(st.flush);
  cudaStreamDestroy(st.stream);
  dev = nullptr;
}

}  // namespace headroom::bench
