// The campaign batcher (gpu_batcher.hpp).
#include "targets/gpu/gpu_batcher.hpp"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "targets/gpu/batch_case.hpp"
#include "targets/gpu/memory/arena_layout.hpp"
#include "targets/gpu/worker/serve.hpp"

namespace headroom {

gpu_batcher::gpu_batcher(batcher_options o) : opt_(std::move(o)) {
  for (int i = 0; i < std::max(1, opt_.workers); ++i)
    workers_.push_back(std::make_unique<gpu::worker_process>(
        gpu::worker_options{opt_.device, {}, opt_.wrapper, opt_.timeout_ms}));
  for (auto& w : workers_)
    threads_.emplace_back([this, p = w.get()] {
      pthread_setname_np(pthread_self(), "hr-batcher");
      loop(*p);
    });
}

gpu_batcher::~gpu_batcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  for (auto& t : threads_) t.join();
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
  for (const auto& w : workers_) s.worker_starts += w->starts();
  return s;
}

batch_outcome gpu_batcher::run(gpu::batch_case c) {
  slot s{std::move(c), 0, {}, false, {}};
  s.arena = arena_bytes(s.c);
  std::unique_lock<std::mutex> lock(mu_);
  pending_.push_back(&s);
  work_.notify_all();
  s.ready.wait(lock, [&] { return s.done; });
  return std::move(s.out);
}

// A batch sent to a worker and not answered yet.
struct gpu_batcher::flight {
  std::vector<slot*> slots;
  gpu::gpu_batch b;
  bool sent = false;
  std::string death;  // why it could not be sent
  gpu::batch_call_result res;
  std::chrono::steady_clock::time_point t0;
};

// Up to opt_.in_flight batches per worker: while the oldest runs on the device, the next are formed
// from whatever waits, sent and begun (serve.hpp); then the oldest answer is read. A batch waits
// to fill (max_wait_us, all clients, max_cases) only when the worker has nothing in flight.
void gpu_batcher::loop(gpu::worker_process& w) {
  using clock = std::chrono::steady_clock;
  std::deque<flight> flying;
  const int depth = std::clamp(opt_.in_flight, 1, gpu::max_batches_in_flight);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (flying.empty()) {
      work_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopping, nothing left
      const auto deadline = clock::now() + std::chrono::microseconds(opt_.max_wait_us);
      work_.wait_until(lock, deadline, [&] {
        const auto n = static_cast<int>(pending_.size());
        return stopping_ || n >= opt_.max_cases || n >= clients_;
      });
    }
    if (!pending_.empty() && static_cast<int>(flying.size()) < depth) {
      flight& f = flying.emplace_back();
      f.slots = take_batch();
      lock.unlock();
      f.t0 = clock::now();
      f.b.guards = opt_.guards;
      for (slot* s : f.slots) f.b.cases.push_back(std::move(s->c));
      f.sent = w.send(f.b, f.death);
      lock.lock();
      continue;
    }
    std::vector<flight> done;  // the oldest; after a failure, every batch behind it too
    done.push_back(std::move(flying.front()));
    flying.pop_front();
    lock.unlock();
    settle(done.front(), w);
    if (!succeeded(done.front())) {  // drain the worker, then replay the failed batches case by case
      while (!flying.empty()) {
        done.push_back(std::move(flying.front()));
        flying.pop_front();
        settle(done.back(), w);
      }
      for (flight& f : done)
        if (!succeeded(f)) replay(f, w);
    }
    lock.lock();
    for (flight& f : done) {
      stats_.batches += 1;
      stats_.cases += static_cast<int64_t>(f.slots.size());
      stats_.busy_seconds += std::chrono::duration<double>(clock::now() - f.t0).count();
      const gpu::gpu_batch_response& r = f.res.resp;
      stats_.setup_ms += r.setup_ms, stats_.kernels_ms += r.kernels_ms, stats_.check_ms += r.check_ms;
      stats_.fill_gpu_ms += r.fill_gpu_ms, stats_.cases_gpu_ms += r.cases_gpu_ms;
      stats_.verdict_gpu_ms += r.verdict_gpu_ms, stats_.guard_gpu_ms += r.guard_gpu_ms;
      for (slot* s : f.slots) {
        stats_.faults += s->out.verdict.faulted ? 1 : 0;
        s->done = true;
        s->ready.notify_one();
      }
    }
  }
}

// Under the lock: the next batch from the front of the queue, within max_cases and the arena budget.
std::vector<gpu_batcher::slot*> gpu_batcher::take_batch() {
  std::vector<slot*> batch;
  int64_t arena = 0;
  while (!pending_.empty() && static_cast<int>(batch.size()) < opt_.max_cases) {
    arena += pending_.front()->arena;
    if (!batch.empty() && arena > opt_.max_arena_bytes) break;
    batch.push_back(pending_.front());
    pending_.pop_front();
  }
  return batch;
}

int64_t gpu_batcher::arena_bytes(const gpu::batch_case& c) const {
  std::vector<const gpu::wire_buffer*> bufs;
  for (const auto& b : c.rq.buffers) bufs.push_back(&b);
  int64_t bytes = 0;
  (void)gpu::arena_layout(bufs, opt_.guards, bytes);
  return bytes;
}

bool gpu_batcher::answered(const gpu::batch_call_result& r, std::size_t cases) {
  return !r.died && !r.resp.faulted && r.resp.error.empty() && r.resp.cases.size() == cases;
}

bool gpu_batcher::succeeded(const flight& f) { return answered(f.res, f.slots.size()); }

// Reads the batch's answer (or notes why there is none) and hands the cases back to their slots;
// on success each slot gets its verdict.
void gpu_batcher::settle(flight& f, gpu::worker_process& w) {
  if (f.sent) {
    f.res = w.receive();
  } else {
    f.res.died = true;
    f.res.death = f.death;
  }
  for (std::size_t i = 0; i < f.slots.size(); ++i) f.slots[i]->c = std::move(f.b.cases[i]);
  if (succeeded(f))
    for (std::size_t i = 0; i < f.slots.size(); ++i) f.slots[i]->out.verdict = f.res.resp.cases[i];
}

// A failed batch, case by case (nothing else in flight on the worker): a fault, or the worker's
// refusal, lands on its own case.
void gpu_batcher::replay(flight& f, gpu::worker_process& w) {
  for (slot* s : f.slots) {
    gpu::gpu_batch one;
    one.guards = opt_.guards;
    one.cases.push_back(std::move(s->c));
    const gpu::batch_call_result res = w.call(one);
    s->c = std::move(one.cases.front());
    {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.replayed += f.slots.size() > 1 ? 1 : 0;
    }
    if (answered(res, 1)) {
      s->out.verdict = res.resp.cases.front();
    } else if (!res.died && !res.resp.error.empty()) {
      s->out.error = res.resp.error;
    } else {
      s->out.verdict.faulted = true;
      s->out.verdict.fault = res.died ? res.death : res.resp.fault;
    }
  }
}

gpu_campaign_executor::gpu_campaign_executor(std::shared_ptr<gpu_batcher> b) : b_(std::move(b)) {
  b_->add_client();
}

gpu_campaign_executor::~gpu_campaign_executor() { b_->remove_client(); }

observation gpu_campaign_executor::run(const run_request& r) {
  gpu::batch_case c = make_batch_case(r);
  batch_outcome out = b_->run(c);
  if (!out.error.empty())
    throw std::runtime_error("gpu executor: the worker rejected the request: " + out.error);
  return observe_verdict(c, out.verdict);
}

}  // namespace headroom
