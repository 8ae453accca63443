// serve_requests (serve.hpp).
#include "targets/gpu/worker/serve.hpp"

#include <exception>

namespace headroom::gpu {

int serve_requests(int in_fd, int out_fd, const std::function<gpu_response(const gpu_request&)>& execute) {
  std::vector<std::byte> msg;
  while (read_message(in_fd, msg) == read_status::ok) {
    gpu_response resp;
    try {
      resp = execute(decode_request(msg));
    } catch (const std::exception& e) {
      resp.error = e.what();
    }
    if (!write_message(out_fd, encode(resp))) return 0;
    if (resp.worker_exiting) return 4;
  }
  return 0;
}

}  // namespace headroom::gpu
