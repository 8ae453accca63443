// GPU prefill benchmarks: headroom's FlashInfer-style batch prefill (kernels/fi_prefill.hpp:
// fi_batch_prefill, then fi_prefill_merge when the plan splits the kv) on the plan plan_fi_prefill
// makes, causal, Hq 64 / Hkv 8 / D 128, bf16, 16-token pages, batch x tokens (no earlier context:
// kv_len = q_len) 1x8192, 4x4096, 8x2048, 32x512. Timed as bench_gpu_decode.cu times
// (bench_gpu_timing.cuh): L2 flushed before each iteration, the family's launches between two CUDA
// events (UseManualTime), the median per repetition.
// Reported: median_us; TFLOPs from the causal FLOP count 4 * Hq * D * sum_i q_i (q_i + 1) / 2
// (query i of a request sees i + 1 keys; 2 * D for Q K^T and 2 * D for P V per pair and head); the
// plan's cta_tile_q, split (0 / 1), kv_chunk (tokens, split only), work_items (written) and padded
// (grid x); the attention launch's warps, smem_bytes (dynamic) and blocks_per_sm (occupancy API);
// tile_pass (1: the tile pass of kernels/attend_tile.hpp, 0: attend_range, also in the label). Every
// variant is checked before it is timed: output and scratch poisoned, one run, every output element written,
// sampled rows against the fp32 reference (bench_gpu_prefill_case.cuh). `fi_prefill_guarded/...`: the same
// launches in the GPU target's guarded arena with the band check after every launch. Without a device: skip,
// exit 0.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>

#include "bench/bench_gpu_prefill_case.cuh"
#include "bench/bench_gpu_timing.cuh"

namespace headroom::bench {
namespace {

std::map<std::string, std::unique_ptr<prefill_case>>& cases() {
  static std::map<std::string, std::unique_ptr<prefill_case>> c;
  return c;
}

prefill_case& get_case(int64_t batch, int64_t len) {
  auto& c = cases()[std::to_string(batch) + "x" + std::to_string(len)];
  if (!c) {
    c = make_prefill_case(batch, len, dev->stream);
    std::fprintf(stderr, "plan %s: %s\n", c->shape().c_str(), c->plan_line().c_str());
  }
  return *c;
}

void BM_prefill(benchmark::State& state, int64_t batch, int64_t len, bool guarded) {
  prefill_case& c = get_case(batch, len);
  // Which pass fi_batch_prefill runs inside a tile (kernels/fi_prefill.hpp): the tile pass, or
  // attend_range() when the rows are not whole and aligned.
  const bool tiled = fi_prefill_tiled<bf16, head_dim>(std::get<fi_prefill_params<bf16>>(c.run.params));
  state.SetLabel(c.path() + (tiled ? " tile" : " range") + (guarded ? " guarded" : ""));
  gpu::device_memory& m = c.run.memory(guarded, dev->stream);
  std::vector<gpu::guard_report> reports;
  // Checked once per benchmark (Google Benchmark calls this function several times).
  static std::map<std::string, std::string> verdicts;
  const std::string key = "fi_prefill " + c.shape() + (guarded ? " guarded" : "");
  if (!verdicts.count(key)) {
    c.run.poison(guarded, dev->stream);
    c.run.run(guarded, dev->stream);
    m.finish_guards(reports);
    HEADROOM_CUDA_TRY(cudaStreamSynchronize(dev->stream));
    const std::string bad = check_prefill(c, guarded, dev->stream);
    verdicts[key] = !bad.empty() ? bad : reports.empty() ? "" : "guard band corrupted";
    std::fprintf(stderr, "checked %s: %s\n", key.c_str(),
                 verdicts[key].empty() ? "ok" : verdicts[key].c_str());
  }
  if (!verdicts[key].empty()) {
    state.SkipWithError(verdicts[key].c_str());
    return;
  }
  const double med = timed_loop(
      state, [&] { c.run.run(guarded, dev->stream); }, [&] { m.finish_guards(reports); });
  state.counters["TFLOPs"] = c.flops() / (med * 1e-3) * 1e-12;
  state.counters["flops"] = c.flops();
  state.counters["cta_tile_q"] = static_cast<double>(c.plan.cta_tile_q);
  state.counters["split"] = c.plan.split_kv ? 1 : 0;
  state.counters["kv_chunk"] = c.plan.split_kv ? static_cast<double>(c.plan.kv_chunk_size) : 0;
  state.counters["work_items"] = static_cast<double>(c.plan.new_batch_size);
  state.counters["padded"] = static_cast<double>(c.plan.padded_batch_size);
  state.counters["warps"] = static_cast<double>(c.warps);
  state.counters["smem_bytes"] = static_cast<double>(c.smem_bytes);
  state.counters["blocks_per_sm"] = static_cast<double>(c.blocks_per_sm);
  state.counters["tile_pass"] = tiled ? 1 : 0;
}

}  // namespace
}  // namespace headroom::bench

int main(int argc, char** argv) {
  using namespace headroom::bench;
  bench_device st;
  if (!open_device(st, "bench_gpu_prefill", false)) return 0;
  // Names: fi_prefill[_guarded]/BATCHxTOKENS.
  const std::pair<int64_t, int64_t> shapes[] = {{1, 8192}, {4, 4096}, {8, 2048}, {32, 512}};
  for (const bool guarded : {false, true})
    for (auto [b, l] : shapes) {
      const std::string id = std::string("fi_prefill") + (guarded ? "_guarded" : "") + "/" +
                             std::to_string(b) + "x" + std::to_string(l);
      benchmark::RegisterBenchmark(id.c_str(), BM_prefill, b, l, guarded)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.2)
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
