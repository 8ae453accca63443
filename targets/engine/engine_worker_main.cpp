// headroom_engine_worker: the worker the engine target's executor spawns in place of
// headroom_gpu_worker (worker_process.hpp). It talks the same worker protocol on descriptor
// worker_channel_fd and starts the engine drivers: python3 with PyTorch, Triton and vLLM's kernel
// from the checkout in $HEADROOM_VLLM_DIR, and headroom_flashinfer_driver where the build has one
// (FlashInfer's kernels, compiled from -DHEADROOM_FLASHINFER_DIR) and headroom_fa3_driver (FA3's
// scheduler kernel, from -DHEADROOM_FA3_DIR); it never initialises CUDA
// itself. Its hello lists the engines whose driver answered (worker_hello::engines) and why each
// other one did not; no engine at all means a hello with device_count 0. Campaign batches are not
// the engine target's path: they are answered with an error.
#include <unistd.h>

#include <climits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "targets/engine/engine_run.hpp"
#include "targets/gpu/worker/serve.hpp"
#include "targets/gpu/worker/worker_process.hpp"

namespace {

using namespace headroom;

struct engine_drivers {
  std::map<std::string, std::unique_ptr<engine::driver_process>> up;  // the engines that answered
  std::map<std::string, std::string> why;                             // the others, and why not
  gpu::worker_hello hello;

  void add(const std::string& name, std::vector<std::string> argv, const char* absent) {
    if (argv.empty()) {
      why[name] = absent;
      return;
    }
    auto d = std::make_unique<engine::driver_process>(std::move(argv));
    const auto h = d->hello();
    if (h.value("device_count", 0) == 0) {
      why[name] = h.value("error", std::string("no device"));
      return;
    }
    hello.device_count = std::max(hello.device_count, h.value("device_count", 0));
    if (hello.device_name.empty()) hello.device_name = h.value("device_name", std::string());
    hello.engines += (hello.engines.empty() ? "" : ",") + name;
    up[name] = std::move(d);
  }

  // The reasons of the engines that are not up, for the hello's error.
  std::string reasons() const {
    std::string s;
    for (const auto& [name, w] : why) s += (s.empty() ? "" : "; ") + name + ": " + w;
    return s;
  }

  gpu::gpu_response run(const gpu::gpu_request& rq) {
    const std::string name = engine::engine_of(rq);
    const auto it = up.find(name);
    if (it == up.end()) {
      gpu::gpu_response r;
      r.error = "no " + name + " engine driver: " + why[name];
      return r;
    }
    return engine::run_engine(*it->second, rq);
  }
};

}  // namespace

int main() {
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  const std::string self = n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : "";
  engine_drivers drivers;
  drivers.add(engine::vllm_triton_engine, engine::driver_argv(self), "");
  drivers.add(engine::flashinfer_engine, engine::flashinfer_driver_argv(self),
              "this build has no FlashInfer driver (configure with -DHEADROOM_FLASHINFER_DIR)");
  drivers.add(engine::fa3_engine, engine::fa3_driver_argv(self),
              "this build has no FA3 driver (configure with -DHEADROOM_FA3_DIR)");
  drivers.hello.error = drivers.reasons();
  const int fd = gpu::worker_channel_fd;
  if (!gpu::write_message(fd, gpu::encode(drivers.hello)) || drivers.hello.device_count == 0) return 0;
  gpu::worker_handlers handlers;
  handlers.run = [&](const gpu::gpu_request& rq) { return drivers.run(rq); };
  handlers.begin_batch = [](gpu::gpu_batch&&) -> std::shared_ptr<void> {
    throw std::runtime_error("the engine target runs no campaign batches");
  };
  handlers.end_batch = [](void*) { return gpu::gpu_batch_response{}; };
  return gpu::serve_requests(fd, fd, handlers);
}
