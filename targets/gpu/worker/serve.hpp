// The worker's side of the protocol after its hello (worker.hpp), shared by the CUDA worker and the
// simulated one (tests/gpu/sim_worker.cpp): one response per request until end of file, a failed
// write, or a response that says the worker must exit.
#pragma once

#include <functional>

#include "targets/gpu/worker/wire.hpp"

namespace headroom::gpu {

struct worker_handlers {
  std::function<gpu_response(const gpu_request&)> run;
  std::function<gpu_batch_response(const gpu_batch&)> run_batch;
};

// Returns the process exit code: 0 at end of input or when the parent is gone, 4 after a response
// with worker_exiting (a lost CUDA context). An exception from a handler becomes response.error.
int serve_requests(int in_fd, int out_fd, const worker_handlers& h);

}  // namespace headroom::gpu
