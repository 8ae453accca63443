// The simulator as an executor (`--target sim`): builds real inputs for a run request, runs the
// kernel bodies on the functional simulator over checked views whose extents are the PLAN's
// capacities, compares the output with the fp32 reference, and reports what it saw.
//   triton_plan      3D kernel + reduce when triton_uses_3d(plan, batch), else the 2D kernel
//   fi_decode_plan   split-KV decode (+ merge when split); the batch must be pure decode
//   fi_prefill_plan  batch prefill (+ merge when split) over the step's requests; the work lists
//                    carry only the planner's entries (reads past them: worklist_uninitialized_reads)
//   fa3_plan, request_meta_plan, mqa_meta_plan, offset_probe_plan
//                    their metadata body (targets/sim/meta_package.hpp); no output to compare
// A request with an engine step runs the attention bodies on the engine's persistent inputs
// (make_step_inputs); when the step's metadata runs past them the output is not compared.
// Observation: touched = per PLAN buffer accessed, largest index + 1 (out-of-bounds included);
// written = the same for stores alone;
// oob = the first out-of-bounds records (inputs and output included); uninitialized_reads and
// races = the simulator's uninitialized reads and shared-memory hazards across a missing barrier;
// index_overflows = 32-bit offsets that wrapped (ctx.offset32); rows_never_computed = output
// (token, head) rows of a prefill plan no block wrote (still poison, or merged from poison).
#pragma once

#include <vector>

#include "core/check/executor.hpp"
#include "core/sim/memory.hpp"

namespace headroom {

// Per-buffer usage of the last run (tests, reports): every buffer of simulator memory.
struct sim_buffer_usage {
  std::string name;
  int64_t extent = 0, elem_bytes = 0;
  sim::buffer_stats stats;
};

struct sim_run_details {
  sim::sim_log log;
  std::vector<sim_buffer_usage> buffers;
  double max_abs_err = 0;
  bool simulated = false;  // false for fi_prefill_plan
};

class sim_executor final : public executor {
 public:
  target_kind kind() const override { return target_kind::sim; }
  // Throws input_error for a layer the kernels cannot run (heads, head size > 512, huge caches)
  // and std::invalid_argument for a request whose plan does not fit its batch.
  observation run(const run_request& r) override;
  const sim_run_details& last() const { return last_; }

 private:
  sim_run_details last_;
};

}  // namespace headroom
