// The engine worker's handle on an engine driver: a child process (python3 running
// vllm_triton_driver.py, or headroom_flashinfer_driver) that holds the CUDA context and launches the engine's
// own kernel. They talk over a socket pair, on descriptor driver_channel_fd in the child, in frames of the
// worker protocol (wire.hpp: a u64 length, then the bytes): a request is a JSON header then the arena's fill
// bytes; a reply is a JSON header then the bytes read back. The driver's first frame is its hello: the
// devices it sees and the engine checkout it loaded, or why it could not.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace headroom::engine {

inline constexpr int driver_channel_fd = 3;
// Override the interpreter and the driver script (else python3 and the script beside the worker).
inline constexpr const char* python_env = "HEADROOM_PYTHON";
inline constexpr const char* driver_env = "HEADROOM_ENGINE_DRIVER";
// The vLLM checkout the driver loads the kernel from (its root: vllm/ lies in it).
inline constexpr const char* vllm_dir_env = "HEADROOM_VLLM_DIR";
// FlashInfer's driver: a program built against the FlashInfer checkout named at configure time
// (-DHEADROOM_FLASHINFER_DIR), beside the worker; the variable overrides where it is.
inline constexpr const char* flashinfer_driver_env = "HEADROOM_FLASHINFER_DRIVER";
inline constexpr const char* flashinfer_driver_name = "headroom_flashinfer_driver";
// FA3's driver, likewise (-DHEADROOM_FA3_DIR).
inline constexpr const char* fa3_driver_env = "HEADROOM_FA3_DRIVER";
inline constexpr const char* fa3_driver_name = "headroom_fa3_driver";

struct driver_reply {
  bool answered = false;  // false: the driver died or hung; `header["detail"]` says how
  nlohmann::json header;
  std::vector<std::byte> payload;
};

class driver_process {
 public:
  // argv: the interpreter, the script and its arguments.
  explicit driver_process(std::vector<std::string> argv, int timeout_ms = 600'000);
  ~driver_process();
  driver_process(const driver_process&) = delete;
  driver_process& operator=(const driver_process&) = delete;

  nlohmann::json hello();  // starts the driver; {"device_count": 0, "error": ...} when it cannot
  driver_reply call(const nlohmann::json& header, const std::vector<std::byte>& payload);

 private:
  bool start(std::string& why);
  std::string stop();  // ends the child (killed if need be); its status in words

  std::vector<std::string> argv_;
  int timeout_ms_;
  pid_t pid_ = -1;
  int fd_ = -1;
};

// The driver's argv from the environment: $HEADROOM_PYTHON (python3) and $HEADROOM_ENGINE_DRIVER,
// else vllm_triton_driver.py in the directory of `worker_exe`.
std::vector<std::string> driver_argv(const std::string& worker_exe);

// FlashInfer's driver: $HEADROOM_FLASHINFER_DRIVER, else headroom_flashinfer_driver beside
// `worker_exe`; empty when this build has none.
std::vector<std::string> flashinfer_driver_argv(const std::string& worker_exe);
// FA3's driver: $HEADROOM_FA3_DRIVER, else headroom_fa3_driver beside `worker_exe`; empty likewise.
std::vector<std::string> fa3_driver_argv(const std::string& worker_exe);

}  // namespace headroom::engine
