// GPU decode benchmarks: headroom's Triton-style (2D or 3D path, as the engine picks it)
// and FlashInfer-style split-KV decode kernels, Hq 64 / Hkv 8 / D 128, bf16, 16-token pages, over
// batch x context 1x32768, 16x4096, 64x4096, 128x2048, 256x1024. Each iteration: flush L2 (a memset
// of twice the device's L2, or a read: flush_l2), then the engine's launches between two CUDA
// events (UseManualTime).
// Reported per repetition: the median time, bytes/s (every KV byte once, q and output) and the
// fraction of the device copy bandwidth this run measures itself (a 1 GiB device-to-device copy,
// read + write). Every variant is checked against the fp32 reference before it is timed.
// `read_per_head/...`, `read_by_page/...`: the read ceilings of the paged cache (bench_gpu_read_ceiling.cuh).
// `guarded/...`: the same launches in the GPU target's guarded arena with its guard check after every
// launch (the GPU lane's guarded mode), for the guard-band overhead. Without a device: skip, exit 0.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "bench/bench_gpu_decode_case.cuh"
#include "bench/bench_gpu_read_ceiling.cuh"

namespace headroom::bench {
namespace {

struct timer {
  cudaEvent_t a, b;
  timer() {
    HEADROOM_CUDA_TRY(cudaEventCreate(&a));
    HEADROOM_CUDA_TRY(cudaEventCreate(&b));
  }
  ~timer() { cudaEventDestroy(a), cudaEventDestroy(b); }
};

struct device_state {
  cudaStream_t stream = nullptr;
  void* flush = nullptr;
  std::size_t flush_bytes = 0;
  double copy_bps = 0;  // measured device-to-device copy, bytes read + written per second
  std::map<std::string, std::unique_ptr<decode_case>> cases;
};
device_state* dev = nullptr;

// The word the read kernels (flush by reading, read ceilings) store to only if their fold takes a
// value it cannot (bench_gpu_read_ceiling.cuh's keep), allocated once.
uint4* sink_word() {
  static uint4* sink = nullptr;
  if (!sink) HEADROOM_CUDA_TRY(cudaMalloc(&sink, sizeof(uint4)));
  return sink;
}

// The flush writes twice L2's size (as triton's do_bench does), leaving dirty lines that are written
// back during the timed interval; HEADROOM_BENCH_FLUSH=read reads the buffer instead (clean
// lines: docs/bench.md compares the two; scripts/bench_sdpa.py takes the same variable).
__global__ void read_flush_kernel(const uint4* p, int64_t n, uint4* sink) {
  uint4 acc{0, 0, 0, 0};
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    fold(acc, p[i]);
  keep(acc, sink);
}

void flush_l2(int i) {
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

double median(std::vector<double> v) {
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

double measure_copy(std::size_t bytes) {
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

decode_case& get_case(int64_t batch, int64_t len) {
  auto& c = dev->cases[std::to_string(batch) + "x" + std::to_string(len)];
  if (!c) c = make_case(batch, len, dev->stream);
  return *c;
}

// Every output element written (no NaN poison left) and sampled requests, all heads, within the
// bf16 tolerance of the fp32 reference. Empty string: correct.
std::string check_output(decode_case& c, variant v, bool guarded) {
  variant_run& run = c.run_of(v);
  const auto bytes = run.memory(guarded, dev->stream).download(run.id_of("output"));
  std::vector<float> out(bytes.size() / sizeof(bf16));
  for (std::size_t i = 0; i < out.size(); ++i) {
    bf16 x;
    std::memcpy(&x, bytes.data() + i * sizeof(bf16), sizeof(x));
    out[i] = to_float(x);
    if (!std::isfinite(out[i])) return "output element " + std::to_string(i) + " not written (NaN poison)";
  }
  std::vector<int64_t> reqs{0, c.batch_size / 2, c.batch_size - 1};
  reqs.erase(std::unique(reqs.begin(), reqs.end()), reqs.end());
  const auto& h = c.host;
  attention_inputs<bf16> sub;
  sub.num_heads = h.num_heads, sub.num_kv_heads = h.num_kv_heads, sub.head_size = h.head_size;
  sub.block_size = h.block_size, sub.max_blocks_per_seq = h.max_blocks_per_seq, sub.max_query_len = 1;
  sub.query_start.push_back(0);
  std::vector<float> got;
  const int64_t row = n_heads * head_dim, mbs = h.max_blocks_per_seq;
  for (int64_t r : reqs) {
    sub.seq_lens.push_back(h.seq_lens[static_cast<std::size_t>(r)]);
    sub.query_start.push_back(sub.query_start.back() + 1);
    sub.block_table.insert(sub.block_table.end(), h.block_table.begin() + r * mbs,
                           h.block_table.begin() + (r + 1) * mbs);
    sub.q.insert(sub.q.end(), h.q.begin() + r * row, h.q.begin() + (r + 1) * row);
    got.insert(got.end(), out.begin() + r * row, out.begin() + (r + 1) * row);
  }
  std::swap(sub.k_cache, c.host.k_cache), std::swap(sub.v_cache, c.host.v_cache);
  const auto ref = attention_reference(sub);
  std::swap(sub.k_cache, c.host.k_cache), std::swap(sub.v_cache, c.host.v_cache);
  const auto cmp = compare_output(got, ref, dtype::bf16, n_heads, head_dim);
  return cmp.mismatch ? cmp.detail : std::string{};
}

// Google Benchmark's loop: flush L2, `body` between two events (manual time), then `after` outside
// the timed interval; counters from the median: bytes/s for `bytes` and the fraction of the copy.
template <class Body, class After>
void timed_loop(benchmark::State& state, double bytes, Body&& body, After&& after) {
  timer t;
  std::vector<double> ms;
  int i = 0;
  for (auto _ : state) {
    const float x = flushed_ms(t, i++, body);
    after();
    ms.push_back(x);
    state.SetIterationTime(x * 1e-3);
  }
  const double med = median(ms), bps = bytes / (med * 1e-3);
  state.counters["median_us"] = med * 1e3;
  state.counters["TBps"] = bps * 1e-12;
  state.counters["frac_copy"] = bps / dev->copy_bps;
  state.counters["copy_TBps"] = dev->copy_bps * 1e-12;
  state.counters["bytes"] = bytes;
}

// Guarded: each launch is followed by its band check, enqueued on the stream as the GPU target's
// worker does (device time, timed), in the arena of the variant's own buffers; the host reads the
// checks back afterwards (finish_guards).
void BM_decode(benchmark::State& state, variant v, int64_t batch, int64_t len, bool guarded) {
  decode_case& c = get_case(batch, len);
  state.SetLabel((v == variant::triton ? c.triton_path() : c.fi_path()) + (guarded ? " guarded" : ""));
  variant_run& run = c.run_of(v);
  gpu::device_memory& m = run.memory(guarded, dev->stream);
  std::vector<gpu::guard_report> reports;
  // Checked once per benchmark (Google Benchmark calls this function several times).
  static std::map<std::string, std::string> verdicts;
  const std::string key =
      std::string(v == variant::triton ? "triton " : "fi ") + c.shape() + (guarded ? " guarded" : "");
  if (!verdicts.count(key)) {
    run.poison(guarded, dev->stream);
    run.run(guarded, dev->stream);
    m.finish_guards(reports);
    HEADROOM_CUDA_TRY(cudaStreamSynchronize(dev->stream));
    const std::string bad = check_output(c, v, guarded);
    verdicts[key] = !bad.empty() ? bad : reports.empty() ? "" : "guard band corrupted";
    std::fprintf(stderr, "checked %s: %s\n", key.c_str(),
                 verdicts[key].empty() ? "ok" : verdicts[key].c_str());
  }
  if (!verdicts[key].empty()) {
    state.SkipWithError(verdicts[key].c_str());
    return;
  }
  timed_loop(
      state, c.bytes(), [&] { run.run(guarded, dev->stream); }, [&] { m.finish_guards(reports); });
}

// The read ceilings (bench_gpu_read_ceiling.cuh): every K and V byte of the case once, no arithmetic.
void BM_read(benchmark::State& state, read_order order, int64_t batch, int64_t len) {
  decode_case& c = get_case(batch, len);
  uint4* sink = sink_word();
  variant_run& run = c.run_of(variant::triton);
  const auto& ptrs = run.memory(false, dev->stream).pointers();
  const auto at = [&](const char* name) { return ptrs[static_cast<std::size_t>(run.id_of(name))]; };
  const double kv_bytes = 2.0 * batch * len * n_kv * head_dim * sizeof(bf16);
  timed_loop(
      state, kv_bytes,
      [&] {
        launch_read<head_dim>(order, at("k_cache"), at("v_cache"),
                              static_cast<const int32_t*>(at("block_table")), batch, len,
                              c.host.max_blocks_per_seq, n_kv, page, sink, dev->stream);
      },
      [] {});
}

void BM_copy(benchmark::State& state) {
  for (auto _ : state) state.SetIterationTime(1e-3);  // the number was measured once, in main()
  state.counters["TBps"] = dev->copy_bps * 1e-12;
  state.counters["copy_TBps"] = dev->copy_bps * 1e-12;
  state.counters["frac_copy"] = 1.0;
}

}  // namespace
}  // namespace headroom::bench

int main(int argc, char** argv) {
  using namespace headroom::bench;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    (void)cudaGetLastError();
    std::printf("bench_gpu_decode: no CUDA device, GPU benchmarks skipped\n");
    return 0;
  }
  cudaDeviceProp prop{};
  HEADROOM_CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
  device_state st;
  dev = &st;
  HEADROOM_CUDA_TRY(cudaStreamCreateWithFlags(&st.stream, cudaStreamNonBlocking));
  st.flush_bytes = 2 * static_cast<std::size_t>(prop.l2CacheSize);
  HEADROOM_CUDA_TRY(cudaMalloc(&st.flush, st.flush_bytes));
  HEADROOM_CUDA_TRY(cudaMemset(st.flush, 0, st.flush_bytes));
  st.copy_bps = measure_copy(std::size_t{1} << 30);
  std::fprintf(stderr, "device %s, %d SMs, L2 %d MiB, copy %.3f TB/s (read + write)\n", prop.name,
               prop.multiProcessorCount, prop.l2CacheSize >> 20, st.copy_bps * 1e-12);
  benchmark::AddCustomContext("device", prop.name);
  benchmark::AddCustomContext("copy_TBps", std::to_string(st.copy_bps * 1e-12));
  benchmark::RegisterBenchmark("copy/1GiB", BM_copy)->UseManualTime()->Iterations(1);
  // Names: KERNEL[_guarded]/BATCHxCONTEXT.
  const std::pair<int64_t, int64_t> shapes[] = {{1, 32768}, {16, 4096}, {64, 4096}, {128, 2048}, {256, 1024}};
  for (const bool guarded : {false, true})
    for (auto [b, l] : shapes)
      for (auto [name, v] : {std::pair{"triton", variant::triton}, std::pair{"fi", variant::fi}}) {
        const std::string id = std::string(name) + (guarded ? "_guarded" : "") + "/" + std::to_string(b) +
                               "x" + std::to_string(l);
        benchmark::RegisterBenchmark(id.c_str(), BM_decode, v, b, l, guarded)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond)
            ->MinTime(0.05)
            ->Repetitions(3)
            ->ReportAggregatesOnly(true);
      }
  for (auto [b, l] : shapes)
    for (auto [name, o] :
         {std::pair{"read_per_head", read_order::per_head}, std::pair{"read_by_page", read_order::by_page}}) {
      const std::string id = std::string(name) + "/" + std::to_string(b) + "x" + std::to_string(l);
      benchmark::RegisterBenchmark(id.c_str(), BM_read, o, b, l)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.05)
          ->Repetitions(3)
          ->ReportAggregatesOnly(true);
    }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  st.cases.clear();
  cudaFree(st.flush);
  cudaStreamDestroy(st.stream);
  return 0;
}
