// headroom_engine_worker: the worker the engine target's executor spawns in place of
// headroom_gpu_worker (worker_process.hpp). It talks the same worker protocol on descriptor
// worker_channel_fd and starts the engine driver (python3, PyTorch, Triton and the engine's own
// kernel from the checkout in $HEADROOM_VLLM_DIR); it never initialises CUDA itself. Its hello is the
// driver's: no device, or no checkout, means a hello with device_count 0 and the reason. Campaign
// batches are not the engine target's path: they are answered with an error.
#include <unistd.h>

#include <climits>
#include <memory>
#include <stdexcept>
#include <string>

#include "targets/engine/engine_run.hpp"
#include "targets/gpu/worker/serve.hpp"
#include "targets/gpu/worker/worker_process.hpp"

int main() {
  using namespace headroom;
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  engine::driver_process driver(
      engine::driver_argv(n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : ""));
  const auto h = driver.hello();
  gpu::worker_hello hello;
  hello.device_count = h.value("device_count", 0);
  hello.device_name = h.value("device_name", std::string());
  hello.error = h.value("error", std::string());
  const int fd = gpu::worker_channel_fd;
  if (!gpu::write_message(fd, gpu::encode(hello)) || hello.device_count == 0) return 0;
  gpu::worker_handlers handlers;
  handlers.run = [&](const gpu::gpu_request& rq) { return engine::run_engine(driver, rq); };
  handlers.begin_batch = [](gpu::gpu_batch&&) -> std::shared_ptr<void> {
    throw std::runtime_error("the engine target runs no campaign batches");
  };
  handlers.end_batch = [](void*) { return gpu::gpu_batch_response{}; };
  return gpu::serve_requests(fd, fd, handlers);
}
