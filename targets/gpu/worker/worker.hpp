// The GPU worker: the only code that initialises CUDA. It runs as its own process
// (headroom_gpu_worker, worker_main.cpp, spawned by worker_process.hpp) so a case that faults the
// GPU loses only that process. Built only when nvcc is found.
#pragma once

#include <memory>

#include "targets/gpu/worker/wire.hpp"

namespace headroom::gpu {

// Never throws: the devices CUDA sees (0 without a driver or device) and the reason when none.
worker_hello probe_devices() noexcept;

// Runs every mode of the request on the current device. A lost context is reported through
// response.worker_exiting (the process must not use CUDA again); other failures through
// run_result.faulted / response.error.
gpu_response execute(const gpu_request& r);

// A campaign batch (wire.hpp gpu_batch): every case once, guarded, in one arena; the verdicts.
// begin_batch enqueues its work and returns at once; end_batch waits for it. A fault the batch
// cannot attribute comes back as response.faulted (worker_exiting when the context is lost). At
// most max_batches_in_flight batches may be in flight (serve.hpp).
struct batch_in_flight;
std::shared_ptr<batch_in_flight> begin_batch(gpu_batch&& b);
gpu_batch_response end_batch(batch_in_flight& f);

// After any failure: is the context still usable? (A sticky error reappears on every call.)
bool context_lost();

// The worker protocol: hello, then one response per request until end of file or a lost context.
// device: the ordinal to use. Returns the process exit code.
int worker_main(int in_fd, int out_fd, int device);

}  // namespace headroom::gpu
