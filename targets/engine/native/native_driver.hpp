// The frame of an engine driver compiled from an engine's checkout (headroom_flashinfer_driver,
// headroom_fa3_driver): the protocol of driver_process.hpp on descriptor driver_channel_fd (a
// hello, then per run a JSON header {arena_bytes, fill, readback, launch, repeat} and the fill bytes
// in; a JSON header {status, detail, kernel_ms, median_ms, exiting, ...} and the readback bytes
// out), the guarded arena as one cudaMalloc written as the header says, the launch timed with
// events, and the regions read back. A driver only says how a launch JSON becomes a call of its
// engine's kernels; the launch's pointers are offsets into the arena, so a kernel that indexes past
// a buffer lands in its guard band.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace headroom::engine::native {

// A failed CUDA runtime call: the driver answers "fault" and exits, since the context may be gone.
struct cuda_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void check(cudaError_t e, const char* what);

struct device_buffer {
  void* p = nullptr;
  explicit device_buffer(std::size_t bytes);
  ~device_buffer();
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  std::byte* bytes() const { return static_cast<std::byte*>(p); }
};

// A launch made ready: the call (its error text, empty on success), what the driver adds to its
// reply (the values it derived, for the record), and what must outlive the call.
struct prepared_launch {
  std::function<std::string()> call;
  nlohmann::json report = nlohmann::json::object();
  std::shared_ptr<void> keep;
};

struct engine_driver {
  std::string engine;                // "flashinfer", "fa3": the hello's error names it
  std::string commit;                // the checkout's, in the hello
  std::vector<std::string> kernels;  // the launch "kernel" values it takes
  // Throws std::exception for a launch it cannot make (the reply is then "error").
  std::function<prepared_launch(const nlohmann::json& launch, std::byte* arena)> prepare;
};

// Serves runs until the worker closes the channel; the process's exit status.
int serve(const engine_driver& d);

// A one-thread kernel that spins for `cycles` clock cycles (covers the host's launch latency
// before a timed launch).
void spin_device(long long cycles);

}  // namespace headroom::engine::native
