// The campaign batcher (gpu_batcher.hpp).
#include "targets/gpu/gpu_batcher.hpp"

#include <chrono>
#include <stdexcept>

#include "targets/gpu/batch_case.hpp"

namespace headroom {

gpu_batcher::gpu_batcher(batcher_options o)
    : opt_(std::move(o)), worker_({opt_.device, opt_.wrapper, opt_.timeout_ms}), thread_([this] { loop(); }) {}

gpu_batcher::~gpu_batcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  thread_.join();
}

void gpu_batcher::add_client() {
  std::lock_guard<std::mutex> lock(mu_);
  ++clients_;
}

void gpu_batcher::remove_client() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --clients_;
  }
  work_.notify_all();  // the others may all be waiting now
}

batcher_stats gpu_batcher::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  batcher_stats s = stats_;
  s.worker_starts = worker_.starts();
  return s;
}

batch_outcome gpu_batcher::run(gpu::batch_case c) {
  slot s{std::move(c), {}, false};
  std::unique_lock<std::mutex> lock(mu_);
  pending_.push_back(&s);
  work_.notify_all();
  done_.wait(lock, [&] { return s.done; });
  return std::move(s.out);
}

void gpu_batcher::loop() {
  using clock = std::chrono::steady_clock;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
    if (pending_.empty()) return;  // stopping, nothing left
    // Wait for a full batch, for every client, or for max_wait_us, whichever comes first.
    const auto deadline = clock::now() + std::chrono::microseconds(opt_.max_wait_us);
    work_.wait_until(lock, deadline, [&] {
      const auto n = static_cast<int>(pending_.size());
      return stopping_ || n >= opt_.max_cases || n >= clients_;
    });
    std::vector<slot*> batch;
    while (!pending_.empty() && static_cast<int>(batch.size()) < opt_.max_cases) {
      batch.push_back(pending_.front());
      pending_.pop_front();
    }
    lock.unlock();
    const auto t0 = clock::now();
    execute(batch);
    const double busy = std::chrono::duration<double>(clock::now() - t0).count();
    lock.lock();
    stats_.batches += 1;
    stats_.cases += static_cast<int64_t>(batch.size());
    stats_.busy_seconds += busy;
    for (slot* s : batch) {
      s->done = true;
      stats_.faults += s->out.verdict.faulted ? 1 : 0;
    }
    done_.notify_all();
  }
}

void gpu_batcher::execute(std::vector<slot*>& batch) {
  gpu::gpu_batch b;
  b.guards = opt_.guards;
  for (slot* s : batch) b.cases.push_back(std::move(s->c));
  const gpu::batch_call_result res = worker_.call(b);
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i]->c = std::move(b.cases[i]);
  if (!res.died && !res.resp.faulted && res.resp.error.empty() && res.resp.cases.size() == batch.size()) {
    for (std::size_t i = 0; i < batch.size(); ++i) batch[i]->out.verdict = res.resp.cases[i];
    return;
  }
  if (batch.size() == 1) {  // alone already: the fault (or refusal) is this case's
    slot& s = *batch[0];
    if (!res.died && !res.resp.error.empty()) {
      s.out.error = res.resp.error;
    } else {
      s.out.verdict.faulted = true;
      s.out.verdict.fault = res.died ? res.death : res.resp.fault;
    }
    return;
  }
  for (slot* s : batch) replay_alone(*s);
}

void gpu_batcher::replay_alone(slot& s) {
  std::vector<slot*> one{&s};
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.replayed += 1;
  }
  execute(one);
}

gpu_campaign_executor::gpu_campaign_executor(std::shared_ptr<gpu_batcher> b) : b_(std::move(b)) {
  b_->add_client();
}

gpu_campaign_executor::~gpu_campaign_executor() { b_->remove_client(); }

observation gpu_campaign_executor::run(const run_request& r) {
  gpu::batch_case c = make_batch_case(r);
  batch_outcome out = b_->run(c);
  if (!out.error.empty()) throw std::runtime_error("gpu executor: the worker rejected the request: " + out.error);
  return observe_verdict(c, out.verdict);
}

}  // namespace headroom
