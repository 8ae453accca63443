// engine_executor.hpp: the GPU executor pointed at the engine worker.
#include "targets/engine/engine_executor.hpp"

#include <mutex>
#include <variant>

#include "core/util/error.hpp"
#include "kernels/triton_attention.hpp"
#include "targets/engine/vllm_triton_launch.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "targets/gpu/worker/worker_process.hpp"

namespace headroom {
namespace {

constexpr const char* engine_worker_name = "headroom_engine_worker";

gpu_executor_options engine_options() {
  gpu_executor_options o;
  o.kind = target_kind::engine;
  o.worker = find_engine_worker();
  o.modes = {gpu::run_mode::guarded};  // an engine kernel has no device-checked build
  o.fp32_in_tf32 = true;               // vLLM's Triton kernel: tl.dot of fp32 inputs is TF32
  o.decorate = [](const run_request& r, gpu::gpu_request& rq) {
    if (const auto* t = std::get_if<triton_plan>(r.plan))
      rq.engine = engine::vllm_triton_engine_args(t->thr, triton_num_segments);
  };
  return o;
}

}  // namespace

std::string find_engine_worker() { return gpu::find_beside_self(engine_worker_name, "targets/engine"); }

int engine_device_count(std::string* why) noexcept {
  static std::once_flag once;
  static int count = 0;
  static std::string reason;
  try {
    std::call_once(once, [] {
      const std::string exe = find_engine_worker();
      if (exe.empty()) {
        reason = std::string("no engine worker (") + engine_worker_name + ") beside this program";
        return;
      }
      gpu::worker_process probe({0, exe, {}, 600'000});
      count = probe.hello().device_count;
      reason = probe.hello().error;
    });
  } catch (const std::exception& e) {
    reason = e.what();
    count = 0;
  }
  if (why) *why = reason;
  return count;
}

engine_executor::engine_executor() : kernels_(engine_options()) {}

observation engine_executor::run(const run_request& r) {
  if (r.plan && std::holds_alternative<triton_plan>(*r.plan)) return kernels_.run(r);
  ++simulated_;
  return sim_.run(r);
}

std::unique_ptr<engine_executor> make_engine_executor() {
  std::string why;
  if (engine_device_count(&why) == 0)
    throw input_error("command line", "--target", "engine",
                      why.empty() ? "no GPU device for the engine driver" : why);
  return std::make_unique<engine_executor>();
}

}  // namespace headroom
