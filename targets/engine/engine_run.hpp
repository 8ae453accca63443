// One request of the engine worker: the guarded arena made on the host (engine_arena.hpp), the
// engine's launch arguments (vllm_triton_launch.hpp), the driver's run, and the bands judged. The
// result is a guarded-mode run_result, so the executor makes its observation (guards, faults,
// output against the fp32 reference) by the same code as for headroom's own bodies.
#pragma once

#include "targets/engine/driver_process.hpp"
#include "targets/engine/engine_arena.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom::engine {

// The driver's request header for `rq` (exposed for the tests).
nlohmann::json engine_header(const gpu::gpu_request& rq, const engine_arena& a);

// Runs rq's guarded mode on the engine's kernel. A run whose kernel faulted, raised, or whose driver
// died comes back faulted (worker_exiting when the driver lost its CUDA context); a request this
// target cannot run (another family, a checked mode) throws std::invalid_argument.
gpu::gpu_response run_engine(driver_process& d, const gpu::gpu_request& rq);

}  // namespace headroom::engine
