// driver_process.hpp: spawning the engine driver and the frame exchange with it.
#include "targets/engine/driver_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "targets/gpu/worker/wire.hpp"
#include "targets/gpu/worker/worker_process.hpp"

extern char** environ;

namespace headroom::engine {
namespace {

constexpr int hello_timeout_ms = 300'000;  // python, torch and the CUDA context

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

std::string dir_of(const std::string& exe) {
  const std::string dir = exe.substr(0, exe.rfind('/') == std::string::npos ? 0 : exe.rfind('/'));
  return dir.empty() ? "." : dir;
}

}  // namespace

std::vector<std::string> driver_argv(const std::string& worker_exe) {
  const char* py = std::getenv(python_env);
  const char* script = std::getenv(driver_env);
  return {py && *py ? py : "python3",
          script && *script ? script : dir_of(worker_exe) + "/vllm_triton_driver.py"};
}

namespace {

// A compiled driver: $env, else `name` beside the worker; empty when neither.
std::vector<std::string> compiled_driver_argv(const std::string& worker_exe, const char* env,
                                              const char* name) {
  const char* exe = std::getenv(env);
  if (exe && *exe) return {exe};
  const std::string beside = dir_of(worker_exe) + "/" + name;
  if (::access(beside.c_str(), X_OK) == 0) return {beside};
  return {};
}

}  // namespace

std::vector<std::string> flashinfer_driver_argv(const std::string& worker_exe) {
  return compiled_driver_argv(worker_exe, flashinfer_driver_env, flashinfer_driver_name);
}

std::vector<std::string> fa3_driver_argv(const std::string& worker_exe) {
  return compiled_driver_argv(worker_exe, fa3_driver_env, fa3_driver_name);
}

driver_process::driver_process(std::vector<std::string> argv, int timeout_ms)
    : argv_(std::move(argv)), timeout_ms_(timeout_ms) {}

driver_process::~driver_process() { stop(); }

bool driver_process::start(std::string& why) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    why = std::string("socketpair: ") + std::strerror(errno);
    return false;
  }
  std::vector<char*> argv;
  for (auto& a : argv_) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], driver_channel_fd);  // dup2 clears close-on-exec
  const int rc = ::posix_spawnp(&pid_, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    pid_ = -1;
    why = "could not start " + argv_.front() + ": " + std::strerror(rc);
    return false;
  }
  fd_ = sv[0];
  return true;
}

std::string driver_process::stop() {
  if (fd_ >= 0) ::close(fd_), fd_ = -1;
  if (pid_ < 0) return "not running";
  int status = 0;
  for (int i = 0; i < 50; ++i) {  // closing its channel ends it; a hung one is killed after 5 s
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return gpu::exit_status_text(status);
    }
    ::usleep(100'000);
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return gpu::exit_status_text(status);
}

nlohmann::json driver_process::hello() {
  std::string why;
  if (fd_ < 0 && !start(why)) return {{"device_count", 0}, {"error", why}};
  std::vector<std::byte> m;
  if (gpu::read_message(fd_, m, hello_timeout_ms) != gpu::read_status::ok) {
    const std::string st = stop();
    return {{"device_count", 0}, {"error", "the engine driver (" + argv_.back() + ") gave no hello: " + st}};
  }
  try {
    return nlohmann::json::parse(std::string(reinterpret_cast<const char*>(m.data()), m.size()));
  } catch (const std::exception& e) {
    return {{"device_count", 0}, {"error", std::string("bad hello from the engine driver: ") + e.what()}};
  }
}

driver_reply driver_process::call(const nlohmann::json& header, const std::vector<std::byte>& payload) {
  driver_reply r;
  if (fd_ < 0) {
    const auto h = hello();
    if (h.value("device_count", 0) == 0) {
      r.header = {{"detail", h.value("error", std::string("the engine driver is not running"))}};
      return r;
    }
  }
  std::vector<std::byte> head, body;
  if (!gpu::write_message(fd_, bytes_of(header.dump())) || !gpu::write_message(fd_, payload) ||
      gpu::read_message(fd_, head, timeout_ms_) != gpu::read_status::ok ||
      gpu::read_message(fd_, body, timeout_ms_) != gpu::read_status::ok) {
    r.header = {{"detail", "the engine driver died or hung: " + stop()}};
    return r;
  }
  try {
    r.header = nlohmann::json::parse(std::string(reinterpret_cast<const char*>(head.data()), head.size()));
  } catch (const std::exception& e) {
    r.header = {{"detail", std::string("bad reply from the engine driver: ") + e.what() + "; " + stop()}};
    return r;
  }
  r.answered = true;
  r.payload = std::move(body);
  if (r.header.value("exiting", false)) stop();  // a lost CUDA context: the next call starts a new one
  return r;
}

}  // namespace headroom::engine
