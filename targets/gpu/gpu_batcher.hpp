// The GPU campaign's oracle (docs/campaigns.md "The GPU campaign path"): every job thread of a
// campaign hands its runs to one batcher, which sends them to one worker process in batches
// (wire.hpp gpu_batch: inputs made on the device, one guarded arena, the output checked on the
// device), several in flight per worker, and hands each thread its verdict. A batch that faults is
// replayed one case at a time, so the fault lands on its case and the others keep their verdicts;
// the worker restarts by itself.
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
  // Worker processes, each taking the next batch when free (on one device their contexts take
  // turns: more than one did not help on the H200, docs/campaigns.md).
  int workers = 1;
  int max_cases = 1024;   // cases per batch at most
  int max_wait_us = 300;  // a batch leaves when full, when every client waits, or after this long
  // Batches sent ahead per worker (at most gpu::max_batches_in_flight). On the H200 3 beat 2 and 4
  // (docs/campaigns.md).
  int in_flight = 3;
  // Each case gets the single run's layout (bands, slack, its own tail), so an overrun lands where
  // it would in a run of its own, never in another case; the tail is capped lower, and a batch's
  // arena at max_arena_bytes (a case larger than that runs alone).
  gpu::guard_options guards{64 * 1024, 4, 1 << 20, 32, int64_t{256} << 20};
  int64_t max_arena_bytes = int64_t{8} << 30;
  int timeout_ms = 600'000;
  std::vector<std::string> wrapper;
};

struct batcher_stats {
  int64_t batches = 0, cases = 0;
  int64_t replayed = 0;                               // cases run again alone after their batch faulted
  int64_t faults = 0;                                 // cases whose own run faulted
  double busy_seconds = 0;                            // worker round trips
  double setup_ms = 0, kernels_ms = 0, check_ms = 0;  // inside the worker (gpu_batch_response)
  double fill_gpu_ms = 0, cases_gpu_ms = 0, verdict_gpu_ms = 0, guard_gpu_ms = 0;
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
  // A waiting run: its thread sleeps on its own condition, woken (under mu_, before the slot can
  // go away) only when its batch is back, not whenever any batch is.
  struct slot {
    gpu::batch_case c;
    int64_t arena = 0;  // its arena bytes (made by the job thread, outside the lock)
    batch_outcome out;
    bool done = false;
    std::condition_variable ready;
  };
  struct flight;
  void loop(gpu::worker_process& w);
  std::vector<slot*> take_batch();
  int64_t arena_bytes(const gpu::batch_case& c) const;
  // A batch's answer holds a verdict for each of its `cases` (no death, fault or refusal).
  static bool answered(const gpu::batch_call_result& r, std::size_t cases);
  static bool succeeded(const flight& f);
  void settle(flight& f, gpu::worker_process& w);
  void replay(flight& f, gpu::worker_process& w);

  batcher_options opt_;
  std::vector<std::unique_ptr<gpu::worker_process>> workers_;
  mutable std::mutex mu_;
  std::condition_variable work_;
  std::deque<slot*> pending_;
  int clients_ = 0;
  bool stopping_ = false;
  batcher_stats stats_;
  std::vector<std::thread> threads_;
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
