// One shard of a fuzz campaign: the case indices first, first + stride, first + 2*stride, ...
// (a single process is the shard 0/1; MPI rank r of N runs r/N). --jobs threads run and shrink its
// cases, each with its own executor, and the outcomes are handed to a sink one at a time in index
// order, so what a shard reports does not depend on thread timing.
// With --target gpu the jobs share one batcher (targets/gpu/gpu_batcher.hpp): each case's runs go to
// the device in batches, guarded only; a failing case is confirmed on the simulator and the
// device-checked build before it counts (the simulator's report is the one kept, and shrunk).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/fuzz_campaign.hpp"
#include "core/check/check.hpp"
#include "generators/search.hpp"
#include "targets/gpu/gpu_batcher.hpp"

namespace headroom::cli {

// What a job found for one case index.
struct shard_outcome {
  uint64_t index = 0;
  bool failing = false;
  std::string raw_signature;                         // of the unshrunk failure
  std::optional<generators::counterexample> shrunk;  // when its kind was new as the job saw it
};

// Takes a shard's outcomes, in index order, one call at a time.
class shard_sink {
 public:
  virtual ~shard_sink() = default;
  virtual void take(const shard_outcome& o) = 0;
};

class shard_runner {
 public:
  using steady = std::chrono::steady_clock;
  shard_runner(const fuzz_options& o, uint64_t first, uint64_t stride, shard_sink& sink);
  ~shard_runner();

  // Starts the job threads, waiting; an input_error naming --jobs when they cannot all start.
  void launch();
  // Lets them run; `start` is the campaign's time origin (the same on every rank), for --time.
  void release(steady::time_point start);
  void start(steady::time_point start) {
    launch();
    release(start);
  }
  void stop() { stop_ = true; }  // no new cases; the ones started finish and are reported
  bool running() const { return active_ > 0; }
  void join();  // waits for the jobs; rethrows the first job's exception

  // A raw failure kind taken elsewhere at a smaller index: cases of that kind are not shrunk.
  void learn_kind(const std::string& raw);

  uint64_t next_index() const;                  // the shard's first index not reported yet
  int64_t cases() const { return cases_; }      // reported (in order)
  int64_t failing() const { return failing_; }  // reported failing
  int64_t started() const { return started_; }  // run so far, for progress
  oracle_time case_time() const;                // the target on sampled cases (job busy time)
  oracle_time shrink_time() const;              // the target while shrinking
  oracle_time confirm_time() const;             // gpu: the confirmations
  int64_t unconfirmed() const { return unconfirmed_; }
  std::string batches() const;  // gpu: the batcher's counts, one line (empty otherwise)

 private:
  void guarded_job();
  void job();
  // gpu: the simulator's report of a failing batch case when the device-checked build fails it too.
  std::optional<report> confirm(const check_case& c, executor& sim);
  bool kind_taken(const std::string& raw);
  void take(uint64_t k, std::optional<shard_outcome> out);  // nullopt: past the limit, not run
  double elapsed() const;
  void add_time(oracle_time& t, int64_t runs, steady::time_point since);

  const fuzz_options& o_;
  const uint64_t first_, stride_;
  shard_sink& sink_;
  steady::time_point start_;
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> next_{0};  // next local position k to run
  std::atomic<int64_t> cases_{0}, failing_{0}, started_{0};
  std::atomic<int> active_{0};
  std::atomic<bool> go_{false}, stop_{false};
  mutable std::mutex mu_;  // pending_, taken_, closed_, error_, times
  std::exception_ptr error_;
  std::map<uint64_t, std::optional<shard_outcome>> pending_;  // by local position
  uint64_t taken_ = 0;
  bool closed_ = false;
  oracle_time case_time_, shrink_time_, confirm_time_;
  std::atomic<int64_t> unconfirmed_{0};
  std::shared_ptr<gpu_batcher> batcher_;  // gpu: shared by the jobs
  std::mutex checked_mu_;                 // gpu: one device-checked executor, one case at a time
  std::unique_ptr<executor> checked_;
  std::mutex kinds_mu_;
  std::set<std::string> kinds_;
};

}  // namespace headroom::cli
