// The engine target (`--target engine`): the engines' own kernels as the oracle. It is the GPU
// executor with another worker: headroom_engine_worker speaks the same protocol, and its guarded
// run lays out the same arena (the plan's buffer sizes, guard bands, poisoned scratch) but launches
// the engines' kernels: vLLM's Triton unified attention from the checkout in $HEADROOM_VLLM_DIR,
// through a Python driver on the device, and FlashInfer's batch decode, compiled from the checkout
// named at configure time into a driver of its own. Observations (guards, faults, output against the fp32
// reference) are made by the GPU executor's code, so every target is judged the same way.
// Families with no engine kernel here (metadata probes) run on the simulator.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "core/check/executor.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "targets/sim/sim_executor.hpp"

namespace headroom {

// The engine worker executable beside the running program or in targets/engine/ of its build tree;
// empty when there is none.
std::string find_engine_worker();

// Never throws: the devices the engine drivers see (0 without the worker, or when no driver
// starts: python3 with torch, triton and a loadable kernel in $HEADROOM_VLLM_DIR; the FlashInfer
// driver of a build configured with -DHEADROOM_FLASHINFER_DIR); `why` says what is missing.
int engine_device_count(std::string* why = nullptr) noexcept;
// The engines whose drivers started, comma-separated (engine_run.hpp names them).
std::string engine_kernels() noexcept;
// Whether `name` is one of a comma-separated engine list (worker_hello::engines).
bool engine_listed(const std::string& engines, const char* name);

// Runs of vLLM's Triton attention and of FlashInfer's batch decode and prefill (which serves
// tensor-core decode too) go to the engines' own kernels (the GPU executor with the engine worker)
// when their driver runs and the engine takes the layer (vllm_triton_unsupported: head sizes from
// 32; flashinfer_unsupported, fi_prefill_tile_built); everything else (fp32 FlashInfer runs, other backends,
// the class checks' metadata probes, which model engine code that is not an attention kernel) runs headroom's
// bodies on the simulator, as with --target sim, and is counted. With $HEADROOM_ENGINE_RUNS naming a
// file, every run appends one line there (engine_run_line): which kernel ran it, so a table of
// results can say which rows the engines' kernels saw.
class engine_executor final : public executor {
 public:
  engine_executor();
  target_kind kind() const override { return target_kind::engine; }
  observation run(const run_request& r) override;
  bool on_engine(const run_request& r) const;   // whether r goes to an engine kernel
  gpu_executor& kernels() { return kernels_; }  // the engine kernels' runs (last(), worker_starts())
  int64_t simulated() const { return simulated_; }

 private:
  void log_run(const run_request& r, bool on_engine, bool fa3_attention = false);

  gpu_executor kernels_;
  std::string engines_;
  sim_executor sim_;
  int64_t simulated_ = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> runs_log_{nullptr, &std::fclose};
  std::mutex log_mutex_;
};

inline constexpr const char* engine_runs_env = "HEADROOM_ENGINE_RUNS";

// One line of the run log, tab-separated: "engine" or "sim", the kernel (vllm_triton,
// flashinfer_decode, flashinfer_prefill, fa3_scheduler, fa3_attention when FA3's attention call
// ran after its scheduler, or the plan kind the simulator ran), the layer, the batch's requests and
// tokens.
std::string engine_run_line(const run_request& r, bool on_engine, bool fa3_attention = false);

// Throws input_error ("--target engine": why it cannot run) when engine_device_count() is 0.
std::unique_ptr<engine_executor> make_engine_executor();

}  // namespace headroom
