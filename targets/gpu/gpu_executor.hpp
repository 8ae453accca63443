// The GPU as an executor (`--target gpu`): the same inputs, plans and params as the simulator
// (targets/sim/package.hpp builds them), run on a device in a worker process in up to three modes:
//   checked   the device-checked build: touched extents and out-of-bounds records with block /
//             thread attribution (reads included)
//   guarded   the zero-cost bodies in a guarded arena: canary bands checked after every launch
//             (guard_corrupted), outputs poisoned and compared with the fp32 reference
//   plain     exact-size allocations, no guards (the cost baseline; what compute-sanitizer watches)
// Every run happens in a worker process (headroom_gpu_worker): a run that faults the GPU (illegal
// address) comes back as observation.faulted, the worker is restarted and the executor goes on.
// This side never initialises CUDA and builds without nvcc (then there is no device).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/check/executor.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom {

// Never throws: devices the GPU worker sees (0 without CUDA, a driver, a device or the worker
// executable). The first call starts a short-lived worker process to ask; the answer is cached.
int gpu_device_count() noexcept;

// The "gpu" target. Throws input_error ("--target gpu": no GPU device) when there is none.
std::unique_ptr<executor> make_gpu_executor();

struct gpu_executor_options {
  std::vector<gpu::run_mode> modes = {gpu::run_mode::checked, gpu::run_mode::guarded};
  // Another worker speaking the same protocol (the engine target's, whose guarded run launches an
  // engine's own kernel) and what it needs in each request beyond the package (it may add buffers
  // and the output's fp32 reference with its head size where the output's rows are not the
  // layer's head size: the FA3 attention call of a DiffKV layer); its target kind.
  std::string worker;  // empty: headroom_gpu_worker (find_worker)
  std::function<void(const run_request&, gpu::gpu_request&, std::vector<float>& reference,
                     int64_t& output_head_size)>
      decorate;
  target_kind kind = target_kind::gpu;
  bool fp32_in_tf32 = false;   // the kernel multiplies fp32 in TF32: its fp32 output held to tf32_tolerance
  bool compare_output = true;  // false: skip the fp32 reference (threshold sweeps, costs)
  int device = 0;
  std::vector<std::string> wrapper;  // the worker's command prefix (compute-sanitizer ...)
  gpu::guard_options guards;
  int timeout_ms = 600'000;
};

// What the last run did, beyond the observation (tests, drivers, cost tables).
struct gpu_run_details {
  bool ran = false;                   // the worker ran the request
  std::vector<gpu::run_result> runs;  // per mode, as the worker returned them
  std::vector<std::string> buffers;   // names by buffer id
  std::vector<int64_t> extents;       // elements by buffer id
  bool worker_died = false;
  std::string death;
  double max_abs_err = 0;  // output run vs the fp32 reference
  int64_t unwritten = 0;   // output elements still holding the poison pattern
  double call_ms = 0;      // wall clock of the worker call, transfers included
};

class gpu_executor final : public executor {
 public:
  explicit gpu_executor(gpu_executor_options o = {});
  ~gpu_executor() override;
  target_kind kind() const override { return opt_.kind; }
  // Throws input_error for a layer the kernels cannot run, std::invalid_argument for a request
  // whose plan does not fit its batch (as the simulator does).
  observation run(const run_request& r) override;
  const gpu_run_details& last() const { return last_; }

  // A prepared request (planted kernels, drivers): runs it and fills last().runs / worker_died.
  gpu::gpu_response execute(const gpu::gpu_request& rq);
  int worker_starts() const;

 private:
  gpu_executor_options opt_;
  struct worker_holder;
  std::unique_ptr<worker_holder> worker_;
  gpu_run_details last_;
};

// The request the executor sends for a run (exposed for the tests and the agreement driver).
// `reference` receives the fp32 reference output. The inputs are built up to `target`'s cap
// (input_cap_of, kernels/inputs.hpp: the engine target's is larger than the simulator's); above it
// input_error names the layer and the count.
gpu::gpu_request make_gpu_request(const run_request& r, std::vector<float>* reference,
                                  target_kind target = target_kind::gpu);

}  // namespace headroom
