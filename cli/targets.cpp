// Targets: the formulas (model), the functional simulator (sim) and, when built with CUDA and a
// device is present, the GPU.
#include <memory>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "core/util/error.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "targets/sim/sim_executor.hpp"

namespace headroom::cli {

std::unique_ptr<executor> make_executor(const std::string& target) {
  if (target == "model") return std::make_unique<model_executor>();
  if (target == "sim") return std::make_unique<sim_executor>();
  if (target == "gpu") return make_gpu_executor();  // input_error when there is no device
  throw input_error(cmdline, "--target", "\"" + target + "\"", "expected model, sim or gpu");
}

}  // namespace headroom::cli
