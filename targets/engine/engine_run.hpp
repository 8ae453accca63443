// One request of the engine worker: the guarded arena made on the host (engine_arena.hpp), the
// engine's launch arguments (vllm_triton_launch.hpp, flashinfer_launch.hpp), the driver's run, and
// the bands judged. The result is a guarded-mode run_result, so the executor makes its observation (guards,
// faults, output against the fp32 reference) by the same code as for headroom's own bodies.
#pragma once

#include "targets/engine/driver_process.hpp"
#include "targets/engine/engine_arena.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom::engine {

// The engines' kernels, by the name the worker's hello lists them under (worker_hello::engines).
inline constexpr const char* vllm_triton_engine = "vllm_triton";
inline constexpr const char* flashinfer_engine = "flashinfer";
inline constexpr const char* fa3_engine = "fa3";

// The engine whose driver runs rq's family; throws std::invalid_argument for a family no engine
// kernel here runs.
const char* engine_of(const gpu::gpu_request& rq);

// The driver's request header for `rq` (exposed for the tests). A request whose `engine` JSON has
// "repeat": N asks the driver for the median of N more launches (a microbenchmark): the run's
// kernels_ms is then that median, else the one guarded launch's time.
nlohmann::json engine_header(const gpu::gpu_request& rq, const engine_arena& a);

// Runs rq's guarded mode on the engine's kernel. A run whose kernel faulted, raised, or whose driver
// died comes back faulted (worker_exiting when the driver lost its CUDA context); a request this
// target cannot run (another family, a checked mode) throws std::invalid_argument.
gpu::gpu_response run_engine(driver_process& d, const gpu::gpu_request& rq);

}  // namespace headroom::engine
