// The GPU lane's agreement driver (scripts/gpu_lane.sh runs it on a GPU machine):
//   1. agreement: N random cases (a third planned to overflow) through the formulas, the simulator
//      and the GPU (device-checked + guarded), in parallel workers;
//   2. cost: the first C cases again, one request each with the plain, guarded and checked modes;
//   3. compute-sanitizer: K in-bounds and K overflowing cases of those, plain mode under memcheck;
//   4. thresholds: `headroom check CONFIG --tp 1,2,4,8 --backend triton --policy model-wide` on the GPU.
// Usage: gpu_agree [--lane decode|prefill] [--cases N] [--seed S] [--jobs J] [--cost C] [--sanitizer K]
// [--sanitizer-cmd P]
//                  [--laguna CONFIG] [--out DIR] [--timeout-ms T] [--time-limit SECONDS]
// (with a time limit no agreement case starts after it; progress on stderr every 100 cases)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "core/check/check.hpp"
#include "core/model/loader.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "targets/sim/sim_executor.hpp"
#include "tests/gpu/gpu_agree.hpp"
#include "tests/gpu/gpu_cases.hpp"

namespace headroom::gpu_test {
namespace {

struct options {
  int64_t cases = 1000, jobs = 8, cost = 300, sanitizer = 0;
  double time_limit_s = 0;   // > 0: no agreement case starts after this many seconds
  int timeout_ms = 120'000;  // per worker request: a hung kernel costs this, not the whole lane
  uint64_t seed = 2026;
  bool prefill = false;  // --lane prefill: prefill and mixed steps, tensor-core decode (C10)
  std::string sanitizer_cmd = "compute-sanitizer", laguna, out = ".";
};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "+") + x;
  return s;
}

bool want_overflow(uint64_t i) { return i % 3 == 0; }

// Case u of the lane the options choose (decode, or prefill and mixed steps).
owned_case lane_case(const options& o, uint64_t u) {
  return o.prefill ? random_prefill_case(o.seed, u, want_overflow(u))
                   : random_case(o.seed, u, want_overflow(u));
}

agreement_row agree_one(const owned_case& c, sim_executor& sim, gpu_executor& gpu) {
  agreement_row r;
  r.index = c.index, r.describe = c.describe(), r.backend = c.backend(), r.dtype = to_string(c.dt);
  r.model_over = c.model_overflow;
  const observation s = sim.run(c.request());
  const observation g = gpu.run(c.request());
  r.sim_over = join(overflowing_buffers(c, s)), r.chk_over = join(overflowing_buffers(c, g));
  r.sim_oob = s.oob_count, r.chk_oob = g.oob_count;
  for (const auto& a : s.oob) r.sim_wrote_past = r.sim_wrote_past || a.write;
  r.sim_stopped = s.incomplete;
  r.touched_equal = s.touched.size() == g.touched.size();
  for (std::size_t k = 0; r.touched_equal && k < s.touched.size(); ++k)
    r.touched_equal = s.touched[k].name == g.touched[k].name && s.touched[k].elems == g.touched[k].elems;
  r.guard = g.guard_corrupted, r.faulted = g.faulted;
  r.sim_out_bad = s.output_mismatch, r.gpu_out_bad = g.output_mismatch;
  r.gpu_err = gpu.last().max_abs_err, r.unwritten = gpu.last().unwritten;
  r.note = g.faulted ? g.fault_detail : g.guard_detail;
  r.kind = c.kind;
  if (std::holds_alternative<fi_prefill_plan>(c.plan)) {
    model_executor model;
    const observation m = model.run(c.request());
    r.model_rows = m.rows_never_computed, r.sim_rows = s.rows_never_computed,
    r.gpu_rows = g.rows_never_computed;
    r.model_wl = m.worklist_uninitialized_reads, r.sim_wl = s.worklist_uninitialized_reads;
    r.chk_wl = g.worklist_uninitialized_reads;
  }
  if (r.note.size() > 240) r.note.resize(240);
  return r;
}

std::vector<agreement_row> agreement(const options& o) {
  std::vector<agreement_row> rows(static_cast<std::size_t>(o.cases));
  std::vector<std::thread> pool;
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::atomic<int64_t> done{0};
  std::vector<char> started(static_cast<std::size_t>(o.cases), 0);
  for (int64_t t = 0; t < o.jobs; ++t)
    pool.emplace_back([&, t] {
      sim_executor sim;
      gpu_executor_options eo;
      eo.timeout_ms = o.timeout_ms;
      gpu_executor gpu(eo);
      for (int64_t i = t; i < o.cases && !(o.time_limit_s > 0 && elapsed() > o.time_limit_s); i += o.jobs) {
        if (const int64_t n = done++; n > 0 && n % 100 == 0)
          std::fprintf(stderr, "gpu_agree: %lld cases started, %.0f s\n", static_cast<long long>(n),
                       elapsed());
        started[static_cast<std::size_t>(i)] = 1;
        const auto u = static_cast<uint64_t>(i);
        try {
          rows[static_cast<std::size_t>(i)] = agree_one(lane_case(o, u), sim, gpu);
        } catch (const std::exception& e) {
          rows[static_cast<std::size_t>(i)].index = u;
          rows[static_cast<std::size_t>(i)].note = std::string("error: ") + e.what();
        }
      }
    });
  for (auto& th : pool) th.join();
  // With a time limit, the longest prefix of cases that all started: rows stay indexed by case.
  const auto cut = std::find(started.begin(), started.end(), 0) - started.begin();
  rows.resize(static_cast<std::size_t>(cut));
  return rows;
}

const gpu::run_result* find_run(const gpu_run_details& d, gpu::run_mode m) {
  for (const auto& r : d.runs)
    if (r.mode == m) return &r;
  return nullptr;
}

std::vector<cost_row> costs(const options& o, const std::vector<agreement_row>& rows, std::string& notes) {
  gpu_executor_options eo;
  eo.modes = {gpu::run_mode::plain, gpu::run_mode::guarded, gpu::run_mode::checked};
  eo.compare_output = false;
  eo.timeout_ms = o.timeout_ms;
  gpu_executor gpu(eo);
  std::vector<cost_row> out;
  auto t0 = std::chrono::steady_clock::now();
  const int64_t count = std::min(o.cost, static_cast<int64_t>(rows.size()));
  for (int64_t i = -10; i < count; ++i) {  // 10 warm-up cases first
    if (i == 0) t0 = std::chrono::steady_clock::now();
    const auto u = static_cast<uint64_t>(i < 0 ? i + 10 : i);
    const owned_case c = lane_case(o, u);
    gpu.run(c.request());
    const auto* p = find_run(gpu.last(), gpu::run_mode::plain);
    const auto* g = find_run(gpu.last(), gpu::run_mode::guarded);
    const auto* k = find_run(gpu.last(), gpu::run_mode::checked);
    if (i < 0 || !p || !g || !k || p->faulted || g->faulted || k->faulted) continue;
    cost_row r;
    r.index = u, r.over = !rows[u].sim_over.empty();
    r.plain = p->total_ms, r.guarded = g->total_ms, r.checked = k->total_ms;
    r.plain_setup = p->setup_ms, r.plain_kernels = p->kernels_ms;
    r.guarded_setup = g->setup_ms, r.guarded_kernels = g->kernels_ms, r.guarded_check = g->guard_ms;
    out.push_back(r);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto n = static_cast<double>(std::max<int64_t>(1, count));
  notes += "cost pass: " + std::to_string(count) + " cases, each in three modes (plain, " +
           "guarded, checked), one worker, in " + std::to_string(wall) + " s wall (" +
           std::to_string(1000 * wall / n) + " ms per case, host input generation and transfers included)\n";
  return out;
}

// Invalid-access reports in the sanitizer's logs so far (each worker process writes its own log;
// a fresh one starts with a banner, so the logs' size is no signal, their reports are).
int64_t invalid_reports(const std::string& dir) {
  int64_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind("sanitizer-", 0) != 0) continue;
    std::ifstream f(e.path());
    for (std::string line; std::getline(f, line);)
      n += line.find("Invalid __global__") != std::string::npos ? 1 : 0;
  }
  return n;
}

// Invalid-access reports and error summaries in the sanitizer's logs (complete once it exited).
std::string log_summary(const std::string& dir) {
  int64_t invalid = 0, summaries = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind("sanitizer-", 0) != 0) continue;
    std::ifstream f(e.path());
    for (std::string line; std::getline(f, line);) {
      invalid += line.find("Invalid __global__") != std::string::npos ? 1 : 0;
      summaries += line.find("ERROR SUMMARY") != std::string::npos ? 1 : 0;
    }
  }
  return std::to_string(invalid) + " 'Invalid __global__' reports, " + std::to_string(summaries) +
         " error summaries in the sanitizer logs";
}

// Plain mode under compute-sanitizer for K in-bounds and K overflowing cases of the cost set.
double sanitizer(const options& o, std::vector<agreement_row>& rows, std::vector<cost_row>& cost,
                 std::string& notes) {
  gpu_executor_options eo;
  eo.modes = {gpu::run_mode::plain};
  eo.compare_output = false;
  eo.timeout_ms = o.timeout_ms;
  // Lazy module loading under the sanitizer: it instruments each kernel as it is first launched.
  // On an invalid access memcheck destroys the context (its default): the worker's launch fails,
  // which attributes the error to its case exactly; the worker is then restarted for the next.
  eo.wrapper = {"env",
                "CUDA_MODULE_LOADING=LAZY",
                o.sanitizer_cmd,
                "--tool",
                "memcheck",
                "--error-exitcode",
                "86",
                "--print-limit",
                "4",
                "--log-file",
                o.out + "/san/sanitizer-%p.log"};
  std::filesystem::create_directories(o.out + "/san");
  double start_ms = -1;
  const auto t0 = std::chrono::steady_clock::now();
  int64_t ran = 0;
  {
    gpu_executor gpu(eo);
    int64_t in = 0, over = 0;
    for (auto& c : cost) {
      const bool is_over = c.over;
      if ((is_over ? over : in) >= o.sanitizer) continue;
      ++(is_over ? over : in);
      const owned_case oc = lane_case(o, c.index);
      const int64_t before = invalid_reports(o.out + "/san");
      const observation ob = gpu.run(oc.request());
      if (start_ms < 0) start_ms = gpu.last().call_ms;
      if (gpu.last().worker_died && gpu.last().death.find("start") != std::string::npos) {
        notes += "compute-sanitizer worker did not start: " + gpu.last().death + "\n";
        break;  // no point in paying the start timeout for every case
      }
      ++ran;
      auto& r = rows[c.index];
      r.sanitizer_fault = ob.faulted;
      // The verdict: memcheck destroyed the context, so the case's launch failed. (Its report may
      // reach the log only when that sanitizer process exits: sanitizer_log is a secondary sign.)
      r.sanitizer_log = invalid_reports(o.out + "/san") > before;
      r.sanitizer = r.sanitizer_fault ? 1 : 0;
      if (r.note.empty() && ob.faulted) r.note = ob.fault_detail.substr(0, 240);
      const auto* p = find_run(gpu.last(), gpu::run_mode::plain);
      if (p && !is_over && !p->faulted) c.sanitizer = p->total_ms;
    }
    notes += "compute-sanitizer workers started: " + std::to_string(gpu.worker_starts()) + "\n";
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  notes += "compute-sanitizer pass: " + std::to_string(ran) + " cases in " + std::to_string(wall) +
           " s wall, one worker at a time, restarts and transfers included (" +
           std::to_string(ran ? 1000 * wall / static_cast<double>(ran) : 0.0) + " ms per case)\n";
  notes += log_summary(o.out + "/san") + "\n";
  return start_ms;
}

std::string laguna(const options& o) {
  const model_geometry m = load_model(o.laguna);
  check_options co;
  co.tps = {1, 2, 4, 8};
  co.backends = {backend::triton};
  co.pol = policy::model_wide;
  model_executor model;
  gpu_executor_options eo;
  eo.compare_output = false;
  eo.timeout_ms = o.timeout_ms;
  gpu_executor gpu(eo);
  const report rm = run_check(m, co, model), rg = run_check(m, co, gpu);
  std::ofstream(o.out + "/laguna_gpu.json") << to_json(rg).dump(2) << "\n";
  std::string s =
      "| tp | group | builder heads | layer heads | first failing batch (model) | (gpu) |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  for (std::size_t i = 0; i < rg.thresholds.size(); ++i) {
    const auto& t = rg.thresholds[i];
    const auto show = [](const std::optional<int64_t>& v) {
      return v ? std::to_string(*v) : std::string("none");
    };
    s += "| " + std::to_string(t.tp) + " | " + std::to_string(t.group) + " | " +
         std::to_string(t.builder_heads) + " | " + std::to_string(t.layer_heads) + " | " +
         (i < rm.thresholds.size() ? show(rm.thresholds[i].min_failing_decode_batch) : "?") + " | " +
         show(t.min_failing_decode_batch) + " |\n";
  }
  s += "\ngpu report: ok=" + std::string(rg.ok ? "true" : "false") + ", " +
       std::to_string(rg.violations.size()) + " violations (model: " + std::to_string(rm.violations.size()) +
       ")\n";
  for (std::size_t i = 0; i < rg.violations.size() && i < 6; ++i)
    s += std::string("- ") + to_string(rg.violations[i].inv) + " " + rg.violations[i].buffer + ": " +
         rg.violations[i].detail.substr(0, 300) + "\n";
  return s;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--cases")
      o.cases = std::stoll(v);
    else if (k == "--seed")
      o.seed = std::stoull(v);
    else if (k == "--jobs")
      o.jobs = std::max<int64_t>(1, std::stoll(v));
    else if (k == "--cost")
      o.cost = std::stoll(v);
    else if (k == "--sanitizer")
      o.sanitizer = std::stoll(v);
    else if (k == "--sanitizer-cmd")
      o.sanitizer_cmd = v;
    else if (k == "--laguna")
      o.laguna = v;
    else if (k == "--out")
      o.out = v;
    else if (k == "--timeout-ms")
      o.timeout_ms = std::stoi(v);
    else if (k == "--time-limit")
      o.time_limit_s = std::stod(v);
    else if (k == "--lane" && (v == "decode" || v == "prefill"))
      o.prefill = v == "prefill";
    else
      throw std::invalid_argument("gpu_agree: unknown option " + k);
  }
  return o;
}

}  // namespace
}  // namespace headroom::gpu_test

int main(int argc, char** argv) {
  using namespace headroom::gpu_test;
  try {
    const options o = parse(argc, argv);
    if (headroom::gpu_device_count() == 0) {
      std::printf("gpu_agree: no GPU device\n");
      return 77;
    }
    std::string md = "## Agreement (seed " + std::to_string(o.seed) + ")\n\n";
    const auto t0 = std::chrono::steady_clock::now();
    auto rows = agreement(o);
    const double agree_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string san_notes = "agreement pass: " + std::to_string(rows.size()) +
                            " cases (sim + checked + guarded + " + "fp32 reference each) in " +
                            std::to_string(agree_s) + " s wall with " + std::to_string(o.jobs) + " jobs\n";
    auto cost = costs(o, rows, san_notes);
    const double san_start = o.sanitizer > 0 ? sanitizer(o, rows, cost, san_notes) : -1;
    md += agreement_table(rows) + "\n" + san_notes + "\n## Cost per case\n\n" + cost_table(cost, san_start);
    if (!o.laguna.empty()) md += "\n## Laguna XS.2 Triton thresholds on the GPU\n\n" + laguna(o);
    write_agreement_csv(o.out + "/agreement.csv", rows);
    write_cost_csv(o.out + "/cost.csv", cost);
    std::ofstream(o.out + "/summary.md") << md;
    std::printf("%s", md.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_agree: %s\n", e.what());
    return 2;
  }
}
