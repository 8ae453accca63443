// Simulator benchmarks: cases per second on a small property-style mix through the sim
// executor (inputs, checked kernels, fp32 reference, comparison), checked accesses per second, and
// the overhead of checked execution against the same bodies run natively with checks compiled out
// (goal <= 3x), timed in thread CPU time. The mix: kv heads 1-2, GQA groups 1-8, head sizes 64 / 80 / 128,
// 1-4 decode requests of 1-64 tokens, bf16, per-layer plans (in bounds), Triton 3D and FlashInfer split-KV.
// The prefill mix (`prefill_...`): the same layers, 1-3 requests of 2-64 query tokens after 0-64
// tokens of context, FlashInfer's prefill plan (one in two with a kv chunk of 16 tokens: split).
#include <benchmark/benchmark.h>

#include <ctime>
#include <utility>
#include <variant>
#include <vector>

#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"
#include "kernels/inputs.hpp"
#include "targets/sim/sim_executor.hpp"
#include "targets/sim/sim_launch.hpp"

namespace headroom {
namespace {

struct mix_case {
  rank_layer layer;
  batch b;
  any_plan plan;
};

// A mix of n cases: each a layer of kv heads 1-2, groups 1-8, head size 64 / 80 / 128 (drawn here)
// with the batch and plan `fill` draws for case i.
template <class Fill>
std::vector<mix_case> make_cases(int n, uint64_t seed, Fill fill) {
  splitmix64 rng{seed};
  auto pick = [&](int64_t k) { return static_cast<int64_t>(rng.next() % static_cast<uint64_t>(k)); };
  std::vector<mix_case> mix;
  for (int i = 0; i < n; ++i) {
    mix_case c;
    const int64_t kv = 1 + pick(2), g = 1 + pick(8), d = std::vector<int64_t>{64, 80, 128}[pick(3)];
    c.layer = {"model.layers.0.self_attn.attn", attn_kind::full, kv * g, kv, d, d, 0};
    fill(c, i, pick);
    mix.push_back(std::move(c));
  }
  return mix;
}

std::vector<mix_case> make_mix(int n, uint64_t seed) {
  return make_cases(n, seed, [](mix_case& c, int i, auto& pick) {
    const rank_layer& l = c.layer;
    c.b = decode_batch(1 + pick(4), 1 + pick(64));
    if (i % 2 == 0) {
      c.plan = plan_triton(l.num_heads, l.num_kv_heads, l.head_size, {});
    } else {
      flashinfer_options o;
      o.cuda_graph = true;  // split even for short sequences
      c.plan = plan_fi_decode(l.num_heads, l.num_kv_heads, l.head_size, dtype::bf16, c.b, o);
    }
  });
}

std::vector<mix_case> make_prefill_mix(int n, uint64_t seed) {
  return make_cases(n, seed, [](mix_case& c, int i, auto& pick) {
    const rank_layer& l = c.layer;
    for (int64_t r = 1 + pick(3); r > 0; --r) {
      const int64_t q = 2 + pick(63);
      c.b.query_lens.push_back(q);
      c.b.seq_lens.push_back(q + pick(65));
    }
    flashinfer_options o;
    if (i % 2 == 1) o.fixed_split_size = 1;  // one-page (16-token) kv chunks: split, merged
    c.plan = plan_fi_prefill(l.num_heads, l.num_kv_heads, l.head_size, c.b, o);
  });
}

void executor_cases(benchmark::State& state, const std::vector<mix_case>& mix) {
  sim_executor ex;
  int64_t cases = 0;
  for (auto _ : state) {
    for (const auto& c : mix) {
      run_request r;
      r.layer = &c.layer;
      r.plan = &c.plan;
      r.b = &c.b;
      r.seed = static_cast<uint64_t>(cases);
      benchmark::DoNotOptimize(ex.run(r));
      ++cases;
    }
  }
  state.counters["cases/s"] = benchmark::Counter(static_cast<double>(cases), benchmark::Counter::kIsRate);
}

void BM_sim_executor_cases(benchmark::State& state) { executor_cases(state, make_mix(64, 1)); }
BENCHMARK(BM_sim_executor_cases)->Unit(benchmark::kMillisecond);
void BM_sim_executor_prefill_cases(benchmark::State& state) {
  executor_cases(state, make_prefill_mix(64, 1));
}
BENCHMARK(BM_sim_executor_prefill_cases)->Unit(benchmark::kMillisecond);

// The kernels alone, on prepared inputs: checked launches, native launches, and their ratio.
struct prepared {
  std::unique_ptr<sim::memory> mem;
  sim_inputs<bf16> in;
  family_params<bf16> params;
};

std::vector<prepared> prepare(const std::vector<mix_case>& mix) {
  std::vector<prepared> out;
  uint64_t seed = 0;
  for (const auto& c : mix) {
    prepared p;
    p.mem = std::make_unique<sim::memory>();
    p.in = upload_inputs(*p.mem, make_attention_inputs<bf16>(c.layer, c.b, 16, seed++));
    p.params = make_params(*p.mem, p.in, c.plan, c.layer, c.b);
    out.push_back(std::move(p));
  }
  return out;
}

// Thread CPU time: the ratio of checked to native time is not skewed by other load on the machine.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

int64_t checked_accesses(const sim::memory& m) {
  int64_t n = m.shared_accesses;
  for (std::size_t i = 0; i < m.size(); ++i) n += m[i].stats.loads + m[i].stats.stores;
  return n;
}

void run_all(std::vector<prepared>& ps, sim_mode mode) {
  for (auto& p : ps) run_family(*p.mem, mode, p.params);
}

// Every iteration runs the prepared cases checked, then native; CPU seconds of each, summed.
std::pair<double, double> checked_and_native_seconds(benchmark::State& state, std::vector<prepared>& ps) {
  double checked_s = 0, native_s = 0;
  for (auto _ : state) {
    const double t0 = cpu_seconds();
    run_all(ps, sim_mode::checked);
    const double t1 = cpu_seconds();
    run_all(ps, sim_mode::native);
    checked_s += t1 - t0;
    native_s += cpu_seconds() - t1;
  }
  return {checked_s, native_s};
}

void kernels_checked_vs_native(benchmark::State& state, const std::vector<mix_case>& mix) {
  auto ps = prepare(mix);
  const auto [checked_s, native_s] = checked_and_native_seconds(state, ps);
  int64_t accesses = 0;
  for (const auto& p : ps) accesses += checked_accesses(*p.mem);
  state.counters["checked_accesses/s"] = static_cast<double>(accesses) / checked_s;
  state.counters["checked_cases/s"] = static_cast<double>(ps.size() * state.iterations()) / checked_s;
  state.counters["native_cases/s"] = static_cast<double>(ps.size() * state.iterations()) / native_s;
  state.counters["overhead_x"] = checked_s / native_s;
}

void BM_kernels_checked_vs_native(benchmark::State& state) {
  kernels_checked_vs_native(state, make_mix(64, 2));
}
BENCHMARK(BM_kernels_checked_vs_native)->Unit(benchmark::kMillisecond);
void BM_prefill_kernels_checked_vs_native(benchmark::State& state) {
  kernels_checked_vs_native(state, make_prefill_mix(64, 2));
}
BENCHMARK(BM_prefill_kernels_checked_vs_native)->Unit(benchmark::kMillisecond);

// One larger case: Laguna XS.2 at tp 8 (8 query heads, 1 kv head, D 128), 32 x 256-token decode.
void BM_laguna_tp8_checked_vs_native(benchmark::State& state) {
  mix_case c;
  c.layer = {"model.layers.1.self_attn.attn", attn_kind::sliding, 8, 1, 128, 128, 512};
  c.b = decode_batch(32, 256);
  c.plan = plan_triton(8, 1, 128, {});
  auto ps = prepare({c});
  const auto [checked_s, native_s] = checked_and_native_seconds(state, ps);
  state.counters["checked_accesses/s"] = static_cast<double>(checked_accesses(*ps[0].mem)) / checked_s;
  state.counters["overhead_x"] = checked_s / native_s;
}
BENCHMARK(BM_laguna_tp8_checked_vs_native)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace headroom

BENCHMARK_MAIN();
