// The GPU campaign's oracle (docs/campaigns.md "The GPU campaign path"): every job thread of a
// campaign hands its runs to one batcher, which sends them to one worker process in batches
// (wire.hpp gpu_batch: inputs made on the device, one guarded arena, the output checked on the
// device) and hands each thread its verdict. A batch that faults is replayed one case at a time, so
// the fault lands on its case and the others keep their verdicts; the worker restarts by itself.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/check/executor.hpp"
#include "targets/gpu/worker/worker_process.hpp"

namespace headroom {

struct batcher_options {
  int device = 0;
  int max_cases = 1024;  // cases per batch at most
  int max_wait_us = 300;  // a batch leaves when full, when every client waits, or after this long
  // Smaller bands than a single run's: a batch holds thousands of buffers. An overrun that starts
  // at a buffer's end still lands in its canaries first.
  gpu::guard_options guards{4096, 1, 64 * 1024, 0, 0};
  int timeout_ms = 600'000;
  std::vector<std::string> wrapper;
};

struct batcher_stats {
  int64_t batches = 0, cases = 0;
  int64_t replayed = 0;    // cases run again alone after their batch faulted
  int64_t faults = 0;      // cases whose own run faulted
  double busy_seconds = 0; // worker round trips
  int worker_starts = 0;
};

// What one case got back: its verdict, or the worker's refusal (a malformed package).
struct batch_outcome {
  gpu::case_verdict verdict;
  std::string error;
};

class gpu_batcher {
 public:
  explicit gpu_batcher(batcher_options o = {});
  ~gpu_batcher();
  gpu_batcher(const gpu_batcher&) = delete;
  gpu_batcher& operator=(const gpu_batcher&) = delete;

  // Thread-safe: blocks until the case has run in some batch.
  batch_outcome run(gpu::batch_case c);
  // Clients (job threads) that may wait at once: a batch leaves as soon as all of them wait.
  void add_client();
  void remove_client();
  batcher_stats stats() const;

 private:
  struct slot {
    gpu::batch_case c;
    batch_outcome out;
    bool done = false;
  };
  void loop();
  void execute(std::vector<slot*>& batch);
  void replay_alone(slot& s);

  batcher_options opt_;
  gpu::worker_process worker_;
  mutable std::mutex mu_;
  std::condition_variable work_, done_;
  std::deque<slot*> pending_;
  int clients_ = 0;
  bool stopping_ = false;
  batcher_stats stats_;
  std::thread thread_;
};

// The campaign's executor, one per job thread, all on one batcher: the guarded run of each request
// in a batch (no device-checked run, no output download: docs/campaigns.md).
class gpu_campaign_executor final : public executor {
 public:
  explicit gpu_campaign_executor(std::shared_ptr<gpu_batcher> b);
  ~gpu_campaign_executor() override;
  target_kind kind() const override { return target_kind::gpu; }
  // Throws as gpu_executor::run does.
  observation run(const run_request& r) override;

 private:
  std::shared_ptr<gpu_batcher> b_;
};

}  // namespace headroom
