// worker_process (worker_process.hpp): finding and spawning the GPU worker executable, the
// request / response exchange with a timeout, and reaping a worker that died.
#include "targets/gpu/worker/worker_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace headroom::gpu {
namespace {

constexpr const char* device_env = "HEADROOM_GPU_DEVICE";
// How long a worker may take to start (driver load, context creation; longer under a sanitizer).
constexpr int hello_timeout_ms = 180'000;

bool executable(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; }

std::string dir_of(const std::string& p) {
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

}  // namespace

std::string find_beside_self(const std::string& name, const std::string& subdir) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return {};
  const std::string dir = dir_of(std::string(buf, static_cast<std::size_t>(n)));
  const std::vector<std::string> rels = {"/", "/../" + subdir + "/", "/../../" + subdir + "/",
                                         "/../../../" + subdir + "/"};
  for (const auto& rel : rels)
    if (executable(dir + rel + name)) return dir + rel + name;
  return {};
}

std::string find_worker() {
  if (const char* e = std::getenv(worker_path_env); e && *e) return executable(e) ? e : std::string();
  if (std::string w = find_beside_self(worker_name, "targets/gpu"); !w.empty()) return w;
#ifdef HEADROOM_GPU_WORKER_PATH
  if (executable(HEADROOM_GPU_WORKER_PATH)) return HEADROOM_GPU_WORKER_PATH;
#endif
  return {};
}

std::string exit_status_text(int status) {
  if (WIFSIGNALED(status))
    return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           ::strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "ended with status " + std::to_string(status);
}

worker_process::worker_process(worker_options o) : opt_(std::move(o)) {}

worker_process::~worker_process() { stop(false); }

bool worker_process::start() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return false;
  if (sv[1] == worker_channel_fd) {  // dup2 onto itself would keep close-on-exec: move it first
    const int d = ::fcntl(sv[1], F_DUPFD_CLOEXEC, worker_channel_fd + 1);
    ::close(sv[1]);
    sv[1] = d;
  }
  const std::string exe = opt_.executable.empty() ? find_worker() : opt_.executable;
  std::vector<std::string> args = opt_.wrapper;
  args.push_back(exe);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string mine = std::string(device_env) + "=" + std::to_string(opt_.device);
  std::vector<char*> envp;
  const std::size_t prefix = std::strlen(device_env) + 1;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, mine.c_str(), prefix) != 0) envp.push_back(*e);
  envp.push_back(mine.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], worker_channel_fd);
  pid_t pid = -1;
  const int rc = exe.empty() || sv[1] < 0
                     ? ENOENT
                     : ::posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (sv[1] >= 0) ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    hello_ = {};
    hello_.error = exe.empty()
                       ? std::string("no GPU worker executable (") + worker_name + ") was found"
                       : "could not start the GPU worker (" + args.front() + "): " + std::strerror(rc);
    have_hello_ = true;
    return false;
  }
  pid_ = pid;
  fd_ = sv[0];
  ++starts_;
  std::vector<std::byte> msg;
  hello_ = {};
  const read_status st = read_message(fd_, msg, std::min(hello_timeout_ms, opt_.timeout_ms));
  if (st == read_status::ok) {
    try {
      hello_ = decode_hello(msg);
    } catch (const std::exception& e) {
      hello_.error = std::string("bad hello from the GPU worker: ") + e.what();
    }
  } else {
    hello_.error = st == read_status::timeout ? "the GPU worker did not start in time"
                                              : "the GPU worker exited at start";
  }
  have_hello_ = true;
  if (hello_.device_count > 0) return true;
  const std::string how = reap();
  if (st != read_status::ok) hello_.error += " (" + how + ")";
  return false;
}

std::string worker_process::reap() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pid_ <= 0) return "no worker";
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid_, &status, 0);
  while (r < 0 && errno == EINTR);
  pid_ = -1;
  return r < 0 ? std::string("lost: ") + std::strerror(errno) : exit_status_text(status);
}

void worker_process::stop(bool force) {
  if (pid_ > 0 && force) ::kill(pid_, SIGKILL);  // only ever our own child, by its pid
  reap();
}

const worker_hello& worker_process::hello() {
  if (pid_ <= 0 && !have_hello_) start();
  return hello_;
}

bool worker_process::exchange(const std::vector<std::byte>& request, std::vector<std::byte>& reply,
                              std::string& death) {
  return send_bytes(request, death) && read_reply(reply, death);
}

bool worker_process::send_bytes(const std::vector<std::byte>& request, std::string& death) {
  if (pid_ <= 0 && !start()) {
    death = hello_.error.empty() ? "no GPU worker" : hello_.error;
    return false;
  }
  if (!write_message(fd_, request)) {
    death = "the GPU worker went away before the request: " + reap();
    return false;
  }
  return true;
}

bool worker_process::read_reply(std::vector<std::byte>& reply, std::string& death) {
  if (pid_ <= 0) {
    death = "the GPU worker is gone";
    return false;
  }
  const read_status st = read_message(fd_, reply, opt_.timeout_ms);
  if (st == read_status::timeout) {
    stop(true);
    death = "the GPU worker did not answer within " + std::to_string(opt_.timeout_ms) + " ms; killed";
    return false;
  }
  if (st == read_status::eof) {
    death = "the GPU worker died during the request: " + reap();
    return false;
  }
  return true;
}

template <class Response, class Decode>
bool worker_process::answer(const std::vector<std::byte>& reply, Decode decode, Response& resp,
                            std::string& death) {
  try {
    resp = decode(reply);
  } catch (const std::exception& e) {
    stop(true);
    death = std::string("bad response from the GPU worker: ") + e.what();
    return false;
  }
  if (resp.worker_exiting) reap();  // the context is lost: it exits; the next call starts anew
  return true;
}

call_result worker_process::call(const gpu_request& r) {
  call_result out;
  std::vector<std::byte> reply;
  out.died = !exchange(encode(r), reply, out.death) || !answer(reply, decode_response, out.resp, out.death);
  return out;
}

bool worker_process::send(const gpu_batch& b, std::string& death) { return send_bytes(encode(b), death); }

batch_call_result worker_process::receive() {
  batch_call_result out;
  std::vector<std::byte> reply;
  out.died = !read_reply(reply, out.death) || !answer(reply, decode_batch_response, out.resp, out.death);
  return out;
}

batch_call_result worker_process::call(const gpu_batch& b) {
  batch_call_result out;
  std::vector<std::byte> reply;
  out.died =
      !exchange(encode(b), reply, out.death) || !answer(reply, decode_batch_response, out.resp, out.death);
  return out;
}

}  // namespace headroom::gpu
