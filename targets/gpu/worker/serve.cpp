// serve_requests (serve.hpp).
#include "targets/gpu/worker/serve.hpp"

#include <deque>
#include <exception>

namespace headroom::gpu {

int serve_requests(int in_fd, int out_fd, const worker_handlers& h) {
  std::deque<std::shared_ptr<void>> in_flight;  // begun batches, not yet answered, oldest first
  int exit_code = -1;
  // Ends the oldest batch in flight and answers it: false when the parent is gone or the worker
  // must exit.
  auto answer_oldest = [&]() {
    if (in_flight.empty()) return true;
    const gpu_batch_response resp = h.end_batch(in_flight.front().get());
    in_flight.pop_front();
    if (!write_message(out_fd, encode(resp)))
      exit_code = 0;
    else if (resp.worker_exiting)
      exit_code = 4;
    return exit_code < 0;
  };
  auto answer_all = [&]() {
    while (!in_flight.empty())
      if (!answer_oldest()) return false;
    return true;
  };
  std::vector<std::byte> msg;
  for (;;) {
    // With batches in flight, only a message already there is read before answering the oldest.
    const read_status st = read_message(in_fd, msg, in_flight.empty() ? -1 : 0);
    if (st == read_status::timeout) {
      if (!answer_oldest()) return exit_code;
      continue;
    }
    if (st != read_status::ok) {
      (void)answer_all();
      return 0;
    }
    if (msg.size() >= sizeof(message_kind) && kind_of(msg) == message_kind::batch) {
      std::shared_ptr<void> next;
      try {
        next = h.begin_batch(decode_batch(msg));
      } catch (const std::exception& e) {  // a malformed batch: answered in order, as an error
        if (!answer_all()) return exit_code;
        gpu_batch_response resp;
        resp.error = e.what();
        if (!write_message(out_fd, encode(resp))) return 0;
        continue;
      }
      in_flight.push_back(std::move(next));
      while (static_cast<int>(in_flight.size()) >= max_batches_in_flight)
        if (!answer_oldest()) return exit_code;
      continue;
    }
    if (!answer_all()) return exit_code;
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
