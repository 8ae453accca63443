// A run request as a case of a campaign batch (wire.hpp gpu_batch): the same package as the
// simulator's (targets/sim/package.hpp) with q, K and V left for the worker to make on the device
// (kernels/input_values.hpp: the simulator's bytes), and, when the step's metadata stays inside its
// buffers, the reference job that checks the output on the device. Then the observation of its
// verdict. Plain C++: no CUDA here.
#pragma once

#include <string>
#include <vector>

#include "core/check/executor.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom {

// Throws as make_gpu_request does (input_error for a layer the kernels cannot run,
// std::invalid_argument for a plan that does not fit its batch).
gpu::batch_case make_batch_case(const run_request& r);

// What the guarded run in a batch observed: faults, corrupted bands (with their buffer names from
// the case's request), output mismatches and never-written output elements.
observation observe_verdict(const gpu::batch_case& c, const gpu::case_verdict& v);

// "<mode> run, launch K: BUFFER: N canary bytes changed at byte offsets [A, B] of a S-byte buffer"
std::string guard_text(const char* run, const gpu::guard_report& g, const gpu::wire_buffer& b);

}  // namespace headroom
