// headroom_gpu_worker: the executable the GPU executor spawns (worker_process.hpp). It talks the
// worker protocol on descriptor worker_channel_fd and uses device $HEADROOM_GPU_DEVICE (0). A
// program of its own, so CUDA starts only after every static initializer (kernel registration
// included) has run, and never in the parent.
#include <cstdlib>

#include "targets/gpu/worker/worker.hpp"
#include "targets/gpu/worker/worker_process.hpp"

int main() {
  const char* d = std::getenv("HEADROOM_GPU_DEVICE");
  return headroom::gpu::worker_main(headroom::gpu::worker_channel_fd, headroom::gpu::worker_channel_fd,
                                    d ? std::atoi(d) : 0);
}
