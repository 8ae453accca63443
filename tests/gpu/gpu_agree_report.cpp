// Reports of the agreement driver (gpu_agree.hpp): CSV rows and markdown summary tables.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>

#include "tests/gpu/gpu_agree.hpp"

namespace headroom::gpu_test {
namespace {

std::string fmt(const char* f, double x) {
  char b[64];
  std::snprintf(b, sizeof(b), f, x);
  return b;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

}  // namespace

void write_agreement_csv(const std::string& path, const std::vector<agreement_row>& rows) {
  std::ofstream f(path);
  f << "index,backend,dtype,model_over,sim_over,chk_over,sim_oob,chk_oob,touched_equal,guard,faulted,"
       "sim_out_bad,gpu_out_bad,gpu_err,unwritten,sanitizer,sanitizer_fault,sanitizer_log,kind,model_rows,"
       "sim_rows,"
       "gpu_rows,model_wl,sim_wl,chk_wl,case,note\n";
  for (const auto& r : rows)
    f << r.index << ',' << r.backend << ',' << r.dtype << ',' << r.model_over << ",\"" << r.sim_over
      << "\",\"" << r.chk_over << "\"," << r.sim_oob << ',' << r.chk_oob << ',' << r.touched_equal << ','
      << r.guard << ',' << r.faulted << ',' << r.sim_out_bad << ',' << r.gpu_out_bad << ',' << r.gpu_err
      << ',' << r.unwritten << ',' << r.sanitizer << ',' << r.sanitizer_fault << ',' << r.sanitizer_log << ','
      << r.kind << ',' << r.model_rows << ',' << r.sim_rows << ',' << r.gpu_rows << ',' << r.model_wl << ','
      << r.sim_wl << ',' << r.chk_wl << ",\"" << r.describe << "\",\"" << r.note << "\"\n";
}

std::string agreement_table(const std::vector<agreement_row>& rows) {
  std::ostringstream s;
  int64_t over = 0, sample = 0;
  for (const auto& r : rows) over += r.sim_over.empty() ? 0 : 1, sample += r.sanitizer >= 0 ? 1 : 0;
  s << rows.size() << " cases, " << over << " overflowing (by the simulator), " << sample
    << " in the compute-sanitizer sample\n\n";
  s << "| comparison | cases | agree | disagree |\n| --- | --- | --- | --- |\n";
  std::vector<std::string> listed;
  const auto line = [&](const char* what, const std::function<int(const agreement_row&)>& f) {
    int64_t n = 0, ok = 0;  // f: -1 not applicable, 1 agree, 0 disagree
    for (const auto& r : rows) {
      const int v = f(r);
      if (v < 0) continue;
      ++n, ok += v;
      if (v == 0 && listed.size() < 20)
        listed.push_back(std::string(what) + ": " + r.describe + " " + r.note);
    }
    s << "| " << what << " | " << n << " | " << ok << " | " << n - ok << " |\n";
  };
  line("model vs sim: overflow verdict",
       [](const agreement_row& r) { return r.model_over == !r.sim_over.empty(); });
  line("sim vs device-checked: overflowing buffers",
       [](const agreement_row& r) { return r.sim_over == r.chk_over; });
  line("sim vs device-checked: touched extents (exact)",
       [](const agreement_row& r) { return int(r.touched_equal); });
  // A simulator stopped after 2^20 violations (C10's garbage indices) counted part of them.
  line("sim vs device-checked: out-of-bounds count (exact; a stopped sim: at most)",
       [](const agreement_row& r) {
         return r.sim_stopped ? int(r.sim_oob > 0 && r.sim_oob <= r.chk_oob) : int(r.sim_oob == r.chk_oob);
       });
  // Guard bands see writes: a prefill merge can read past scratch its attention launch never
  // wrote past (more heads than planned), which only the simulator and the checked run see.
  line("sim vs guard bands: writes past a buffer",
       [](const agreement_row& r) { return r.sim_wl > 0 ? -1 : int(r.guard == r.sim_wrote_past); });
  // Blocks that read never-written work entries run on garbage indices: a fault may follow.
  line("no GPU fault (guarded run; C10 cases aside)",
       [](const agreement_row& r) { return r.sim_wl > 0 ? -1 : int(!r.faulted); });
  line("sim vs compute-sanitizer: any invalid access", [](const agreement_row& r) {
    return r.sanitizer < 0 ? -1 : int((r.sanitizer == 1) == (r.sim_oob > 0));
  });
  const bool prefill = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return !r.kind.empty(); });
  if (prefill) {
    const auto planned = [](const agreement_row& r) { return r.kind != "triton-mixed"; };
    line("model vs sim: rows never computed (exact, in-bounds runs)", [&](const agreement_row& r) {
      return planned(r) && r.sim_oob == 0 ? int(r.model_rows == r.sim_rows) : -1;
    });
    line("sim vs GPU: rows never computed (exact, in-bounds runs)", [&](const agreement_row& r) {
      return planned(r) && r.sim_oob == 0 ? int(r.sim_rows == r.gpu_rows) : -1;
    });
    // A simulator stopped after 2^20 violations (garbage indices) has counted part of the reads.
    line("model vs device-checked: reads of never-written work entries (exact)",
         [&](const agreement_row& r) { return planned(r) ? int(r.model_wl == r.chk_wl) : -1; });
    line("model vs sim: reads of never-written work entries (exact; a stopped sim: found, at most)",
         [&](const agreement_row& r) {
           if (!planned(r)) return -1;
           if (!r.sim_stopped) return int(r.model_wl == r.sim_wl);
           return int((r.sim_wl > 0) == (r.model_wl > 0) && r.sim_wl <= r.model_wl);
         });
  }
  line("clean runs: GPU output vs fp32 reference",
       [](const agreement_row& r) { return r.clean() ? int(!r.gpu_out_bad && r.unwritten == 0) : -1; });
  line("clean runs: sim output vs fp32 reference",
       [](const agreement_row& r) { return r.clean() ? int(!r.sim_out_bad) : -1; });
  line("overflowing: GPU (guarded) output vs fp32 reference",
       [](const agreement_row& r) { return r.sim_over.empty() ? -1 : int(!r.gpu_out_bad); });
  if (!listed.empty()) {
    s << "\nDisagreements (first " << listed.size() << "):\n";
    for (const auto& l : listed) s << "- " << l << "\n";
  }
  return s.str();
}

void write_cost_csv(const std::string& path, const std::vector<cost_row>& rows) {
  std::ofstream f(path);
  f << "index,over,plain_ms,guarded_ms,checked_ms,guarded_setup,guarded_kernels,guarded_check,plain_setup,"
       "plain_kernels,sanitizer_ms\n";
  for (const auto& r : rows)
    f << r.index << ',' << r.over << ',' << r.plain << ',' << r.guarded << ',' << r.checked << ','
      << r.guarded_setup << ',' << r.guarded_kernels << ',' << r.guarded_check << ',' << r.plain_setup << ','
      << r.plain_kernels << ',' << r.sanitizer << "\n";
}

std::string cost_table(const std::vector<cost_row>& rows, double sanitizer_start_ms) {
  std::vector<double> plain, guarded, checked, gk, gc, gs, pk, ps, san, san_plain, lane;
  for (const auto& r : rows) {
    plain.push_back(r.plain), guarded.push_back(r.guarded), checked.push_back(r.checked);
    gs.push_back(r.guarded_setup), gk.push_back(r.guarded_kernels), gc.push_back(r.guarded_check);
    ps.push_back(r.plain_setup), pk.push_back(r.plain_kernels);
    lane.push_back(r.guarded + r.checked);
    if (r.sanitizer >= 0) san.push_back(r.sanitizer), san_plain.push_back(r.plain);
  }
  std::ostringstream s;
  s << "| per case (ms, worker wall clock) | median | mean |\n| --- | --- | --- |\n";
  const auto row = [&](const char* what, const std::vector<double>& v) {
    s << "| " << what << " | " << fmt("%.3f", median(v)) << " | " << fmt("%.3f", mean(v)) << " |\n";
  };
  row("plain (unguarded): total", plain);
  row("plain: setup (alloc, upload, poison)", ps);
  row("plain: kernels", pk);
  row("guarded: total", guarded);
  row("guarded: setup (arena, canary, upload, poison)", gs);
  row("guarded: kernels + band check behind each", gk);
  row("guarded: read-back (output + check results)", gc);
  row("device-checked: total", checked);
  row("lane (checked + guarded)", lane);
  if (!san.empty()) {
    row("plain under compute-sanitizer (sample)", san);
    row("plain without it (same sample)", san_plain);
  }
  s << "\nguarded / plain: median " << fmt("%.3f", median(guarded) / std::max(1e-9, median(plain)))
    << ", mean " << fmt("%.3f", mean(guarded) / std::max(1e-9, mean(plain))) << " (" << rows.size()
    << " cases)\n";
  s << "guarded kernels / plain kernels (mean): " << fmt("%.3f", mean(gk) / std::max(1e-9, mean(pk))) << "\n";
  if (!san.empty()) {
    s << "compute-sanitizer / plain (mean, same cases): "
      << fmt("%.1f", mean(san) / std::max(1e-9, mean(san_plain)))
      << "x; sanitizer / lane (mean): " << fmt("%.1f", mean(san) / std::max(1e-9, mean(lane))) << "x"
      << "; compute-sanitizer worker start: " << fmt("%.0f", sanitizer_start_ms) << " ms\n";
  }
  return s.str();
}

}  // namespace headroom::gpu_test
