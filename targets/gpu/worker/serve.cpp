// serve_requests (serve.hpp).
#include "targets/gpu/worker/serve.hpp"

#include <exception>

namespace headroom::gpu {

int serve_requests(int in_fd, int out_fd, const worker_handlers& h) {
  std::shared_ptr<void> in_flight;  // a begun batch, not yet answered
  // Ends the batch in flight and answers it: false when the parent is gone or the worker must exit.
  int exit_code = -1;
  auto answer_in_flight = [&]() {
    if (!in_flight) return true;
    const gpu_batch_response resp = h.end_batch(in_flight.get());
    in_flight.reset();
    if (!write_message(out_fd, encode(resp)))
      exit_code = 0;
    else if (resp.worker_exiting)
      exit_code = 4;
    return exit_code < 0;
  };
  std::vector<std::byte> msg;
  for (;;) {
    // With a batch in flight, only a message already there is read before answering it.
    const read_status st = read_message(in_fd, msg, in_flight ? 0 : -1);
    if (st == read_status::timeout) {
      if (!answer_in_flight()) return exit_code;
      continue;
    }
    if (st != read_status::ok) {
      (void)answer_in_flight();
      return 0;
    }
    if (msg.size() >= sizeof(message_kind) && kind_of(msg) == message_kind::batch) {
      std::shared_ptr<void> next;
      try {
        next = h.begin_batch(decode_batch(msg));
      } catch (const std::exception& e) {  // a malformed batch: answered in order, as an error
        if (!answer_in_flight()) return exit_code;
        gpu_batch_response resp;
        resp.error = e.what();
        if (!write_message(out_fd, encode(resp))) return 0;
        continue;
      }
      if (!answer_in_flight()) return exit_code;
      in_flight = std::move(next);
      continue;
    }
    if (!answer_in_flight()) return exit_code;
    gpu_response resp;
    try {
      resp = h.run(decode_request(msg));
    } catch (const std::exception& e) {
      resp.error = e.what();
    }
    if (!write_message(out_fd, encode(resp))) return 0;
    if (resp.worker_exiting) return 4;
  }
}

}  // namespace headroom::gpu
