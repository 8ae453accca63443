// Campaign benchmarks: what one fuzz job does per case (sample a case from (seed, index), run it
// guarded on a target) in cases/s, on the property mix `headroom fuzz` samples by default
// (per-layer, both backends), one thread, wall clock. The target is an argument: model and sim
// here; gpu on a machine with a device (skipped with a message without one). Sampling alone is
// timed too: it is host work that a GPU campaign must take off its hot path. The GPU campaign path
// (many job threads on one batcher) has its own benchmark. Whole campaigns, one
// process against MPI ranks (scaling over cores): scripts/bench_campaign.sh.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "core/util/error.hpp"
#include "generators/case_gen.hpp"
#include "generators/search.hpp"
#include "targets/gpu/gpu_batcher.hpp"
#include "targets/gpu/gpu_executor.hpp"

namespace headroom {
namespace {

constexpr uint64_t seed = 2026;  // the GPU lane's seed: the same cases on every machine
const char* targets[] = {"model", "sim", "gpu"};

void BM_campaign_cases(benchmark::State& state) {
  const std::string target = targets[state.range(0)];
  std::unique_ptr<executor> ex;
  try {
    ex = cli::make_executor(target);
  } catch (const input_error& e) {
    state.SkipWithError(e.what());
    return;
  }
  const generators::case_profile profile;
  uint64_t i = 0;
  int64_t failing = 0;
  for (auto _ : state) {
    ++i;
    const report r = generators::run_guarded(generators::sample_case(profile, seed, i), *ex);
    failing += !r.ok;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["cases/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["failing"] = static_cast<double>(failing);
  state.SetLabel(target);
}
BENCHMARK(BM_campaign_cases)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->MinTime(3.0)
    ->Unit(benchmark::kMicrosecond);

// The GPU campaign path: job threads sharing one batcher, each case's runs in batches on the
// device, guarded, as `headroom fuzz --target gpu --jobs N` runs them (failures are not confirmed
// here: this times the hot path). Cases/s is the sum over threads.
void BM_campaign_gpu_batched(benchmark::State& state) {
  if (gpu_device_count() == 0) {
    state.SkipWithError("no GPU device");
    return;
  }
  static const auto batcher = std::make_shared<gpu_batcher>();
  gpu_campaign_executor ex(batcher);
  const generators::case_profile profile;
  uint64_t i = static_cast<uint64_t>(state.thread_index());
  int64_t failing = 0;
  for (auto _ : state) {
    failing += !generators::run_guarded(generators::sample_case(profile, seed, i), ex).ok;
    i += static_cast<uint64_t>(state.threads());
  }
  state.counters["cases/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["failing"] = static_cast<double>(failing);
}
BENCHMARK(BM_campaign_gpu_batched)
    ->ThreadRange(16, 128)
    ->UseRealTime()
    ->MinTime(5.0)
    ->Unit(benchmark::kMicrosecond);

void BM_campaign_sample(benchmark::State& state) {
  const generators::case_profile profile;
  uint64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(generators::sample_case(profile, seed, i++));
  state.counters["cases/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_campaign_sample)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace headroom

BENCHMARK_MAIN();
