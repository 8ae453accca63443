// serve_requests (serve.hpp).
#include "targets/gpu/worker/serve.hpp"

#include <exception>

namespace headroom::gpu {

namespace {

template <class Response, class Decode, class Run>
bool answer(int out_fd, const std::vector<std::byte>& msg, Decode decode, const Run& run, bool& exiting) {
  Response resp;
  try {
    resp = run(decode(msg));
  } catch (const std::exception& e) {
    resp.error = e.what();
  }
  exiting = resp.worker_exiting;
  return write_message(out_fd, encode(resp));
}

}  // namespace

int serve_requests(int in_fd, int out_fd, const worker_handlers& h) {
  std::vector<std::byte> msg;
  while (read_message(in_fd, msg) == read_status::ok) {
    bool exiting = false, written = false;
    if (msg.size() >= sizeof(message_kind) && kind_of(msg) == message_kind::batch)
      written = answer<gpu_batch_response>(out_fd, msg, decode_batch, h.run_batch, exiting);
    else
      written = answer<gpu_response>(out_fd, msg, decode_request, h.run, exiting);
    if (!written) return 0;
    if (exiting) return 4;
  }
  return 0;
}

}  // namespace headroom::gpu
