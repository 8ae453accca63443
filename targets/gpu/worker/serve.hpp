// The worker's side of the protocol after its hello (worker.hpp), shared by the CUDA worker and the
// simulated one (tests/gpu/sim_worker.cpp): one response per request until end of file, a failed
// write, or a response that says the worker must exit.
#pragma once

#include <functional>
#include <memory>

#include "targets/gpu/worker/wire.hpp"

namespace headroom::gpu {

// A campaign batch is begun (its work enqueued on the device) and ended (waited for, its verdicts
// made) apart: a batch that has arrived is begun before the ones in flight are ended, so the host
// side of one overlaps the device side of the others and the device has several batches' work.
// Responses keep the requests' order; the worker holds fewer than max_batches_in_flight begun
// batches between reads (the batcher decides how many it sends ahead, at most that many).
inline constexpr int max_batches_in_flight = 4;
struct worker_handlers {
  std::function<gpu_response(const gpu_request&)> run;
  std::function<std::shared_ptr<void>(gpu_batch&&)> begin_batch;
  std::function<gpu_batch_response(void*)> end_batch;
};

// Returns the process exit code: 0 at end of input or when the parent is gone, 4 after a response
// with worker_exiting (a lost CUDA context). An exception from `run` becomes response.error; the
// batch handlers report their failures in the response.
int serve_requests(int in_fd, int out_fd, const worker_handlers& h);

}  // namespace headroom::gpu
