// The engine target (`--target engine`): the engines' own kernels as the oracle. It is the GPU
// executor with another worker: headroom_engine_worker speaks the same protocol, and its guarded
// run lays out the same arena (the plan's buffer sizes, guard bands, poisoned scratch) but launches
// the engine's kernel, vLLM's Triton unified attention from the checkout in $HEADROOM_VLLM_DIR,
// through a Python driver on the device. Observations (guards, faults, output against the fp32
// reference) are made by the GPU executor's code, so every target is judged the same way.
// Families with no engine kernel here (metadata probes) run on the simulator.
#pragma once

#include <memory>
#include <string>

#include "core/check/executor.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "targets/sim/sim_executor.hpp"

namespace headroom {

// The engine worker executable beside the running program or in targets/engine/ of its build tree;
// empty when there is none.
std::string find_engine_worker();

// Never throws: the devices the engine driver sees (0 without the worker, python3 with torch and
// triton, a device, or a loadable kernel in $HEADROOM_VLLM_DIR); `why` says what is missing.
int engine_device_count(std::string* why = nullptr) noexcept;

// Runs of vLLM's Triton attention go to its own kernel (the GPU executor with the engine worker);
// the class checks' metadata probes, which model engine code that is not an attention kernel, run
// headroom's bodies on the simulator, as with --target sim.
class engine_executor final : public executor {
 public:
  engine_executor();
  target_kind kind() const override { return target_kind::engine; }
  observation run(const run_request& r) override;
  gpu_executor& kernels() { return kernels_; }  // the engine kernels' runs (last(), worker_starts())
  int64_t simulated() const { return simulated_; }

 private:
  gpu_executor kernels_;
  sim_executor sim_;
  int64_t simulated_ = 0;
};

// Throws input_error ("--target engine": why it cannot run) when engine_device_count() is 0.
std::unique_ptr<engine_executor> make_engine_executor();

}  // namespace headroom
