// The agreement driver's records and reports (gpu_agree.cpp runs the cases, gpu_agree_report.cpp
// writes agreement.csv and the markdown tables that docs/gpu.md quotes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace headroom::gpu_test {

// One random case as the four oracles saw it.
struct agreement_row {
  uint64_t index = 0;
  std::string describe, backend, dtype;
  bool model_over = false;                        // the formulas: a plan buffer too small
  std::string sim_over, chk_over;                 // overflowing plan buffers (joined), sim / checked GPU
  int64_t sim_oob = 0, chk_oob = 0;               // out-of-bounds element accesses
  bool touched_equal = false;                     // sim and checked GPU touched extents, exactly
  bool guard = false;                             // guard bands changed (guarded or checked run)
  bool faulted = false;                           // any GPU run faulted
  bool sim_out_bad = false, gpu_out_bad = false;  // output vs fp32 reference
  double gpu_err = 0;
  int64_t unwritten = 0;
  int sanitizer = -1;            // -1 not in the sample; 0 clean; 1 errors reported
  bool sanitizer_fault = false;  // the verdict: the launch failed under memcheck
  bool sanitizer_log = false;    // new 'Invalid __global__' lines appeared meanwhile
  std::string note;              // first guard / fault / disagreement detail
  // The prefill lane (kind non-empty): rows no block computed and reads of never-written work
  // entries, by the formulas, the simulator and the GPU (rows: from the guarded run's output and
  // partial states; reads: the device-checked run's count).
  std::string kind;
  int64_t model_rows = 0, sim_rows = 0, gpu_rows = 0;
  int64_t model_wl = 0, sim_wl = 0, chk_wl = 0;
  bool sim_stopped = false;  // the simulator stopped after too many violations: its counts are lower bounds
  bool sim_wrote_past =
      false;  // among the simulator's out-of-bounds records, a write (guard bands see writes)
  // In bounds, every row computed and no never-written entry read: the output must be right.
  bool clean() const { return sim_over.empty() && sim_oob == 0 && sim_rows == 0 && sim_wl == 0; }
};

// Worker-side wall clock of one case in each mode (ms), from one request with all three modes.
struct cost_row {
  uint64_t index = 0;
  bool over = false;
  double plain = 0, guarded = 0, checked = 0;
  double guarded_setup = 0, guarded_kernels = 0, guarded_check = 0, plain_setup = 0, plain_kernels = 0;
  double sanitizer = -1;  // the same plain run under compute-sanitizer (-1: not in the sample)
};

void write_agreement_csv(const std::string& path, const std::vector<agreement_row>& rows);
// The agreement table (markdown) with counts and the disagreements listed.
std::string agreement_table(const std::vector<agreement_row>& rows);
void write_cost_csv(const std::string& path, const std::vector<cost_row>& rows);
std::string cost_table(const std::vector<cost_row>& rows, double sanitizer_start_ms);

}  // namespace headroom::gpu_test
