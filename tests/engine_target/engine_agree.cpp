// The engine target's agreement driver (scripts/engine_lane.sh runs it on a GPU machine with a vLLM
// checkout and/or a FlashInfer build): random cases of the GPU lane's generators (a third planned to
// overflow) whose kernel an engine driver runs (vLLM's Triton attention, FlashInfer's batch decode
// and batch prefill: engine_executor::on_engine), each run on the simulator (headroom's bodies, every
// access checked) and on the engine's own kernel in the guarded arena, compared row by row, per
// engine kernel:
//   overflow   the simulator wrote past a plan buffer  <=>  the engine kernel changed its guard band
//              (a band sees writes; a read past a buffer, such as FlashInfer's merge reading partial
//              rows no tile wrote, is the simulator's alone and counted apart)
//   buffers    the same plan buffers, by name
//   extent     the simulator's touched extent of an overrun buffer = the last changed canary byte's
//              element + 1 (where the overrun ends inside the band's checked part)
//   work list  the simulator read never-written work-list entries (catalogue C10)  <=>  the engine
//              kernel faulted or changed a band (it took poison as request and tile indices)
//   output     a case with neither: the output verdict against the fp32 reference is the same on
//              both (good on both, or rows no planned tile computes left unwritten on both)
// Usage: engine_agree [--lane decode|prefill] [--cases N] [--seed S] [--jobs J] [--out DIR]
//                     [--time-limit SECONDS] [--only I,J,...]
// Writes DIR/engine_agreement.csv and prints the counts (markdown); exit 1 on any disagreement.
// With a time limit, no case starts after it: the counts are of the cases that ran.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>

#include "core/backends/triton.hpp"
#include "targets/engine/engine_executor.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "targets/sim/sim_executor.hpp"
#include "tests/gpu/gpu_cases.hpp"

namespace headroom::gpu_test {
namespace {

struct options {
  int64_t cases = 1000, jobs = 4;
  double time_limit_s = 0;    // > 0: no case starts after this many seconds
  std::vector<int64_t> only;  // run these case indices only
  uint64_t seed = 2026;
  bool prefill = false;
  std::string out = ".";
};

struct row {
  uint64_t index = 0;
  std::string engine, describe, dtype, sim_over, sim_read_over, eng_over, note;
  std::string detail;  // per plan buffer: name:sim's written extent/extent/engine's last changed byte
  bool ran = false, faulted = false, sim_out_bad = false, eng_out_bad = false, extent_equal = true;
  bool extent_measured = false;
  int64_t worklist_reads = 0, rows_never = 0;  // the simulator's
  double err = 0;
};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "+") + x;
  return s;
}

// A scratch buffer's after band (arena_layout) and its canary part, where an overrun's end is seen.
int64_t after_band(int64_t bytes) {
  const gpu::guard_options g;
  return std::max(g.min_band, g.after_factor * bytes);
}
int64_t checked_band(int64_t bytes) {
  const gpu::guard_options g;
  return std::min(after_band(bytes), std::max(g.min_band, g.max_band));
}
// The plan buffers of fp32 elements (Triton's softmax_segm_*, FlashInfer's tmp_s); the others hold
// the case's element type.
int64_t elem_bytes_of(const std::string& name, dtype dt) {
  return name.rfind("segm_", 0) == 0 || name == "tmp_s" ? 4 : dtype_bytes(dt);
}

row agree_one(const owned_case& c, sim_executor& sim, gpu_executor& eng) {
  row r;
  r.index = c.index, r.describe = c.describe(), r.dtype = to_string(c.dt);
  r.engine = std::holds_alternative<triton_plan>(c.plan)       ? "vllm_triton"
             : std::holds_alternative<fi_prefill_plan>(c.plan) ? "flashinfer_prefill"
                                                               : "flashinfer_decode";
  const observation s = sim.run(c.request());
  const observation e = eng.run(c.request());
  r.ran = true;
  observation stores = s;  // the simulator's stores alone: what a guard band can see
  stores.touched = s.written;
  const auto written_past = overflowing_buffers(c, stores);
  r.sim_over = join(written_past);
  std::vector<std::string> read_past;
  for (const auto& b : overflowing_buffers(c, s))
    if (std::find(written_past.begin(), written_past.end(), b) == written_past.end()) read_past.push_back(b);
  r.sim_read_over = join(read_past);
  r.faulted = e.faulted;
  r.sim_out_bad = s.output_mismatch, r.eng_out_bad = e.output_mismatch;
  r.worklist_reads = s.worklist_uninitialized_reads, r.rows_never = s.rows_never_computed;
  r.err = eng.last().max_abs_err;
  std::vector<std::string> over;
  const auto& d = eng.last();
  // The bytes the simulator saw written past buffer `name`'s end (0 when none).
  const auto overrun = [&](const std::string& name, int64_t eb, int64_t extent) {
    for (const auto& t : s.written)
      if (t.name == name && t.elems > extent) return (t.elems - extent) * eb;
    return int64_t{0};
  };
  // An overrun past a buffer's whole after band lands in the next buffer's bands: then no band's
  // last changed byte says where its own buffer's overrun ended.
  bool contained = true;
  for (std::size_t i = 0; i < d.buffers.size(); ++i) {
    const int64_t eb = elem_bytes_of(d.buffers[i], c.dt);
    contained = contained && overrun(d.buffers[i], eb, d.extents[i]) <= after_band(d.extents[i] * eb);
  }
  for (const auto& run : d.runs)
    for (const auto& g : run.guards) {
      const auto name = d.buffers.at(static_cast<std::size_t>(g.buffer));
      over.push_back(name);
      // The overrun's end, where the band can see it (it ends inside the checked part).
      const int64_t eb = elem_bytes_of(name, c.dt);
      const int64_t extent = d.extents.at(static_cast<std::size_t>(g.buffer));
      const int64_t seen = (g.last + eb) / eb;  // elements up to the last changed byte
      const int64_t past = overrun(name, eb, extent);
      if (contained && past > 0 && past <= checked_band(extent * eb)) {
        r.extent_measured = true;
        r.extent_equal = r.extent_equal && seen == extent + past / eb;
      }
    }
  r.eng_over = join(over);
  for (std::size_t i = 0; i < d.buffers.size(); ++i) {
    int64_t touched = 0, last = -1;
    for (const auto& t : s.written)
      if (t.name == d.buffers[i]) touched = std::max(touched, t.elems);
    for (const auto& run : d.runs)
      for (const auto& g : run.guards)
        if (static_cast<std::size_t>(g.buffer) == i) last = std::max(last, g.last);
    r.detail += (r.detail.empty() ? "" : " ") + d.buffers[i] + ":" + std::to_string(touched) + "/" +
                std::to_string(d.extents[i]) + "/" + std::to_string(last);
  }
  r.note = e.faulted ? e.fault_detail : (e.output_mismatch ? e.mismatch_detail : e.guard_detail);
  if (r.note.size() > 200) r.note.resize(200);
  return r;
}

std::string csv_field(std::string s) {
  for (auto& ch : s)
    if (ch == ',' || ch == '\n') ch = ';';
  return s;
}

// Prints one engine's rows (markdown); returns its disagreements.
int64_t summary(const std::vector<row>& rows, const std::string& engine) {
  int64_t ran = 0, over_agree = 0, over_cases = 0, buf_agree = 0, ext_n = 0, ext_eq = 0, clean = 0,
          clean_ok = 0, clean_unwritten = 0, wl_cases = 0, wl_agree = 0, faults = 0, read_past = 0, bad = 0;
  for (const auto& r : rows) {
    if (!r.ran || r.engine != engine) continue;
    ++ran;
    const bool so = !r.sim_over.empty(), wl = r.worklist_reads > 0, eo = !r.eng_over.empty() || r.faulted;
    over_cases += so;
    faults += r.faulted;
    read_past += !r.sim_read_over.empty();
    ext_n += r.extent_measured, ext_eq += r.extent_measured && r.extent_equal;
    bool agree = !(r.extent_measured && !r.extent_equal);
    if (wl && !so) {  // garbage indices: a fault or wild writes, no buffer's overrun to name
      ++wl_cases, wl_agree += eo;
      agree = agree && eo;
    } else {
      over_agree += so == eo;
      buf_agree += r.sim_over == r.eng_over;
      agree = agree && so == eo && r.sim_over == r.eng_over;
    }
    if (!so && !wl) {
      ++clean, clean_ok += r.eng_out_bad == r.sim_out_bad;
      clean_unwritten += r.eng_out_bad && r.sim_out_bad && r.rows_never > 0;
      agree = agree && r.eng_out_bad == r.sim_out_bad;
    }
    bad += !agree;
  }
  if (ran == 0) return 0;
  const auto ll = [](int64_t x) { return static_cast<long long>(x); };
  std::printf("\n%s: %lld cases\n\n| row | agree / cases |\n|---|---|\n", engine.c_str(), ll(ran));
  std::printf(
      "| overflow verdict (sim wrote past a plan buffer = engine guard band changed) | %lld / %lld (%lld "
      "overflowing) |\n",
      ll(over_agree), ll(ran - wl_cases), ll(over_cases));
  std::printf("| overrun buffers by name | %lld / %lld |\n", ll(buf_agree), ll(ran - wl_cases));
  std::printf(
      "| never-written work-list entries read (sim, C10) = engine faulted or changed a band | %lld / %lld "
      "|\n",
      ll(wl_agree), ll(wl_cases));
  std::printf("| touched extent (sim) = last changed canary (engine) | %lld / %lld measurable |\n",
              ll(ext_eq), ll(ext_n));
  std::printf(
      "| in-bounds output verdict vs fp32 reference, sim = engine | %lld / %lld (%lld with rows no tile "
      "computes, unwritten on both) |\n",
      ll(clean_ok), ll(clean), ll(clean_unwritten));
  std::printf("| engine faults | %lld |\n", ll(faults));
  std::printf(
      "| cases where the sim read past a plan buffer it did not write past (no band sees a read) | %lld |\n",
      ll(read_past));
  return bad;
}

int run(const options& o) {
  std::vector<row> rows(static_cast<std::size_t>(o.cases));
  std::vector<std::thread> pool;
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int64_t> drawn{0};
  const auto out_of_time = [&] {
    return o.time_limit_s > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > o.time_limit_s;
  };
  std::mutex setup_mu;
  std::string setup_error;  // the first worker that could not start its engines
  for (int64_t t = 0; t < o.jobs; ++t)
    pool.emplace_back([&, t] {
      sim_executor sim;
      std::unique_ptr<engine_executor> ex;
      try {
        ex = make_engine_executor();
      } catch (const std::exception& e) {
        const std::lock_guard<std::mutex> lock(setup_mu);
        if (setup_error.empty()) setup_error = e.what();
        return;
      }
      auto& eng = ex->kernels();
      for (int64_t i = t; i < o.cases && !out_of_time(); i += o.jobs) {
        if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), i) == o.only.end()) continue;
        const auto u = static_cast<uint64_t>(i);
        auto& r = rows[static_cast<std::size_t>(i)];
        r.index = u;
        ++drawn;
        try {
          const owned_case c =
              o.prefill ? random_prefill_case(o.seed, u, u % 3 == 0) : random_case(o.seed, u, u % 3 == 0);
          if (ex->on_engine(c.request())) r = agree_one(c, sim, eng);
        } catch (const std::exception& e) {
          r.note = std::string("error: ") + e.what();
        }
      }
    });
  for (auto& th : pool) th.join();
  if (!setup_error.empty()) throw std::runtime_error(setup_error);
  // Which engines ran: an engine whose driver did not start has no rows, and says why here.
  std::string why;
  engine_device_count(&why);
  std::printf("engines up: %s%s%s\n", engine_kernels().c_str(), why.empty() ? "" : "; not up: ", why.c_str());
  std::ofstream csv(o.out + "/engine_agreement.csv");
  csv << "index,engine,case,dtype,sim_over,engine_over,faulted,sim_out_bad,engine_out_bad,extent_measured,"
         "extent_equal,max_abs_err,worklist_reads,rows_never,sim_read_past,buffers,note\n";
  int64_t errors = 0, bad = 0;
  for (const auto& r : rows) {
    if (!r.note.empty() && r.note.rfind("error: ", 0) == 0) ++errors;
    if (!r.ran) continue;
    csv << r.index << "," << r.engine << "," << csv_field(r.describe) << "," << r.dtype << "," << r.sim_over
        << "," << r.eng_over << "," << r.faulted << "," << r.sim_out_bad << "," << r.eng_out_bad << ","
        << r.extent_measured << "," << r.extent_equal << "," << r.err << "," << r.worklist_reads << ","
        << r.rows_never << "," << r.sim_read_over << "," << r.detail << "," << csv_field(r.note) << "\n";
  }
  for (const char* engine : {"vllm_triton", "flashinfer_decode", "flashinfer_prefill"})
    bad += summary(rows, engine);
  std::printf("cases drawn %lld, harness errors %lld, disagreements %lld\n", (long long)drawn.load(),
              (long long)errors, (long long)bad);
  return bad == 0 && errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace headroom::gpu_test

int main(int argc, char** argv) {
  headroom::gpu_test::options o;
  if (argc % 2 == 0) {  // flags come in pairs: a lone one (--help) is not a run
    std::fprintf(stderr,
                 "usage: engine_agree [--lane decode|prefill] [--cases N] [--jobs N] [--seed N] [--out DIR] "
                 "[--time-limit S] [--only I,J,...]\n");
    return 2;
  }
  try {
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string f = argv[i], v = argv[i + 1];
      // The whole text a number, else one line naming the flag and the value.
      const auto num = [&](auto parse, const std::string& text = std::string()) {
        const std::string& t = text.empty() ? v : text;
        std::size_t used = 0;
        try {
          const auto x = parse(t, &used);
          if (used == t.size()) return x;
        } catch (const std::exception&) {
        }
        throw std::invalid_argument("bad number for " + f + ": '" + v + "'");
      };
      const auto i64 = [](const std::string& x, std::size_t* n) { return std::stoll(x, n); };
      if (f == "--cases")
        o.cases = num(i64);
      else if (f == "--jobs")
        o.jobs = num(i64);
      else if (f == "--seed")
        o.seed = num([](const std::string& x, std::size_t* n) { return std::stoull(x, n); });
      else if (f == "--lane" && (v == "decode" || v == "prefill"))
        o.prefill = v == "prefill";
      else if (f == "--out")
        o.out = v;
      else if (f == "--time-limit")
        o.time_limit_s = num([](const std::string& x, std::size_t* n) { return std::stod(x, n); });
      else if (f == "--only") {
        std::stringstream in(v);
        for (std::string x; std::getline(in, x, ',');) o.only.push_back(num(i64, x));
      } else {
        std::fprintf(stderr, "engine_agree: bad flag or value: %s %s\n", f.c_str(), v.c_str());
        return 2;
      }
    }
    if (o.cases < 1 || o.jobs < 1) throw std::invalid_argument("--cases and --jobs are at least 1");
    return headroom::gpu_test::run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine_agree: %s\n", e.what());
    return 2;
  }
}
