// The parent's handle on a GPU worker: a child process (the executable headroom_gpu_worker, built
// from worker_main.cpp) talking the worker protocol (wire.hpp) over a socket pair. The parent never
// initialises CUDA, and a fault (illegal address, a crash, a hang past the timeout) kills only the
// child: call() reports it and the next call starts a fresh one. Optionally the child runs under a
// wrapper command (compute-sanitizer --tool memcheck ...).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "targets/gpu/worker/wire.hpp"

namespace headroom::gpu {

inline constexpr const char* worker_name = "headroom_gpu_worker";
// Overrides where the worker executable is (tests point it at a simulated worker).
inline constexpr const char* worker_path_env = "HEADROOM_GPU_WORKER_BIN";
// The worker's end of the socket pair, at this descriptor number in the child.
inline constexpr int worker_channel_fd = 1000;

// The worker executable: $HEADROOM_GPU_WORKER_BIN, else next to the running program or in
// targets/gpu/ of its build tree (searched relative to it), else where this build put it.
// Empty when there is none.
std::string find_worker();
// An executable `name` next to the running program or in `subdir` (e.g. "targets/gpu") of the build
// tree it runs from, searched relative to it (so a build tree copied elsewhere still finds it).
std::string find_beside_self(const std::string& name, const std::string& subdir);
// A child's wait status in words ("exited with code 3", "killed by signal 9 (Killed)").
std::string exit_status_text(int status);

struct worker_options {
  int device = 0;
  std::string executable;            // empty: find_worker()
  std::vector<std::string> wrapper;  // argv prefix, e.g. {"compute-sanitizer", "--tool", "memcheck"}
  int timeout_ms = 600'000;          // per request; then the worker is killed (a hung kernel)
};

struct call_result {
  gpu_response resp;
  bool died = false;  // the worker faulted, crashed, hung or could not start
  std::string death;  // why, in words (exit code, signal, timeout, the response's fault)
};

struct batch_call_result {
  gpu_batch_response resp;
  bool died = false;
  std::string death;
};

class worker_process {
 public:
  explicit worker_process(worker_options o = {});
  ~worker_process();
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  // Starts the worker if needed and returns its hello (device_count 0 when it could not start).
  const worker_hello& hello();
  call_result call(const gpu_request& r);
  batch_call_result call(const gpu_batch& b);
  // The same in two halves, so that a second batch can be sent before the first one's answer is
  // read (the worker begins it while the first runs: serve.hpp). Answers come in order.
  bool send(const gpu_batch& b, std::string& death);
  batch_call_result receive();
  int starts() const { return starts_; }  // workers started so far (1 + restarts)

 private:
  bool start();
  void stop(bool force);
  std::string reap();  // waits for the child; its exit status in words
  // Sends a request and reads the reply; false (and why) when the worker could not answer.
  bool exchange(const std::vector<std::byte>& request, std::vector<std::byte>& reply, std::string& death);
  bool send_bytes(const std::vector<std::byte>& request, std::string& death);
  bool read_reply(std::vector<std::byte>& reply, std::string& death);
  template <class Response, class Decode>
  bool answer(const std::vector<std::byte>& reply, Decode decode, Response& resp, std::string& death);

  worker_options opt_;
  pid_t pid_ = -1;
  int fd_ = -1;
  bool have_hello_ = false;
  worker_hello hello_;
  int starts_ = 0;
};

}  // namespace headroom::gpu
