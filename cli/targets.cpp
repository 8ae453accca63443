// Targets: the formulas (model), the functional simulator (sim) and, when a device is present, the
// GPU (headroom's bodies, built with CUDA) and the engines' own kernels (engine).
#include <memory>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "core/util/error.hpp"
#include "targets/engine/engine_executor.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "targets/sim/sim_executor.hpp"

namespace headroom::cli {

std::unique_ptr<executor> make_executor(const std::string& target) {
  if (target == "model") return std::make_unique<model_executor>();
  if (target == "sim") return std::make_unique<sim_executor>();
  if (target == "gpu") return make_gpu_executor();        // input_error when there is no device
  if (target == "engine") return make_engine_executor();  // ... or no engine checkout
  throw input_error(cmdline, "--target", "\"" + target + "\"", "expected model, sim, gpu or engine");
}

}  // namespace headroom::cli
