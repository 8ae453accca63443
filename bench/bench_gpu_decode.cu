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

#include "bench/bench_gpu_check.cuh"
#include "bench/bench_gpu_decode_case.cuh"
#include "bench/bench_gpu_read_ceiling.cuh"
#include "bench/bench_gpu_timing.cuh"

namespace headroom::bench {
namespace {

// The decode cases, made on first use.
std::map<std::string, std::unique_ptr<decode_case>>& cases() {
  static std::map<std::string, std::unique_ptr<decode_case>> c;
  return c;
}

decode_case& get_case(int64_t batch, int64_t len) {
  auto& c = cases()[std::to_string(batch) + "x" + std::to_string(len)];
  if (!c) c = make_case(batch, len, dev->stream);
  return *c;
}

// Every output element written (no NaN poison left) and sampled requests, all heads, within the
// bf16 tolerance of the fp32 reference. Empty string: correct.
std::string check_output(decode_case& c, variant v, bool guarded) {
  int64_t unwritten = -1;
  const auto out = download_output(c.run_of(v), guarded, dev->stream, unwritten);
  if (unwritten >= 0) return "output element " + std::to_string(unwritten) + " not written (NaN poison)";
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (int64_t r : {int64_t{0}, c.batch_size / 2, c.batch_size - 1})
    if (rows.empty() || rows.back().first != r) rows.push_back({r, 0});
  return check_sampled_rows(c.host, out, rows);
}

// timed_loop (bench_gpu_timing.cuh) with the bandwidth counters of the median: bytes/s for `bytes`
// and the fraction of the copy.
template <class Body, class After>
void timed_bytes_loop(benchmark::State& state, double bytes, Body&& body, After&& after) {
  const double med = timed_loop(state, body, after), bps = bytes / (med * 1e-3);
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
  timed_bytes_loop(
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
  timed_bytes_loop(
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
  bench_device st;
  if (!open_device(st, "bench_gpu_decode", true)) return 0;
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
  cases().clear();
  close_device(st);
  return 0;
}
