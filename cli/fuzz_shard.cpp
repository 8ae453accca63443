// One shard of a fuzz campaign (fuzz_shard.hpp): job threads, the in-order hand-over to the sink.
#include "cli/fuzz_shard.hpp"

#include <pthread.h>

#include <cstdio>
#include <system_error>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "core/util/error.hpp"
#include "generators/case_gen.hpp"
#include "targets/gpu/gpu_executor.hpp"

namespace headroom::cli {

namespace gen = headroom::generators;

shard_runner::shard_runner(const fuzz_options& o, uint64_t first, uint64_t stride, shard_sink& sink)
    : o_(o), first_(first), stride_(stride), sink_(sink) {}

shard_runner::~shard_runner() {
  stop_ = true;
  go_ = true;
  go_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void shard_runner::launch() {
  if (o_.target == "gpu" && !batcher_) {
    make_executor("gpu");  // no device: the input_error of --target gpu
    batcher_ = std::make_shared<gpu_batcher>();
  }
  active_ = o_.jobs;
  try {
    for (int j = 0; j < o_.jobs; ++j)
      threads_.emplace_back([this] {
        pthread_setname_np(pthread_self(), "hr-job");
        guarded_job();
      });
  } catch (const std::system_error& e) {  // no thread for this job: say so, run nothing
    const auto started = threads_.size();
    stop_ = true;
    active_ -= o_.jobs - static_cast<int>(started);
    go_ = true;
    go_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
    throw input_error(cmdline, "--jobs", std::to_string(o_.jobs),
                      "only " + std::to_string(started) + " job threads could be started (" + e.what() +
                          "); use fewer jobs");
  }
}

void shard_runner::release(steady::time_point start) {
  start_ = start;
  go_ = true;
  go_.notify_all();
}

void shard_runner::join() {
  for (auto& t : threads_) t.join();
  threads_.clear();
  if (error_) std::rethrow_exception(error_);
}

void shard_runner::learn_kind(const std::string& raw) {
  std::lock_guard<std::mutex> lock(kinds_mu_);
  kinds_.insert(raw);
}

uint64_t shard_runner::next_index() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_ + taken_ * stride_;
}

oracle_time shard_runner::case_time() const {
  std::lock_guard<std::mutex> lock(mu_);
  return case_time_;
}

oracle_time shard_runner::shrink_time() const {
  std::lock_guard<std::mutex> lock(mu_);
  return shrink_time_;
}

oracle_time shard_runner::confirm_time() const {
  std::lock_guard<std::mutex> lock(mu_);
  return confirm_time_;
}

std::string shard_runner::batches() const {
  if (!batcher_) return {};
  const batcher_stats b = batcher_->stats();
  char line[512];
  std::snprintf(
      line, sizeof line,
      "gpu batches: %lld runs in %lld batches (%.1f per batch), %.2f s in round trips (worker: set-up "
      "%.2f s, launches %.2f s, check %.2f s; device: fill %.2f s, cases %.2f s, output check %.2f s, "
      "guard check %.2f s), %lld replayed alone after a fault, %lld faulted, %d worker start%s",
      static_cast<long long>(b.cases), static_cast<long long>(b.batches),
      b.batches ? static_cast<double>(b.cases) / static_cast<double>(b.batches) : 0.0, b.busy_seconds,
      b.setup_ms / 1e3, b.kernels_ms / 1e3, b.check_ms / 1e3, b.fill_gpu_ms / 1e3, b.cases_gpu_ms / 1e3,
      b.verdict_gpu_ms / 1e3, b.guard_gpu_ms / 1e3, static_cast<long long>(b.replayed),
      static_cast<long long>(b.faults), b.worker_starts, b.worker_starts == 1 ? "" : "s");
  return line;
}

std::optional<report> shard_runner::confirm(const check_case& c, executor& sim) {
  report rs = gen::run_guarded(c, sim);
  if (rs.ok) return std::nullopt;
  std::lock_guard<std::mutex> lock(checked_mu_);
  if (!checked_) checked_ = make_gpu_executor();  // the checked and guarded runs of each request
  if (gen::run_guarded(c, *checked_).ok) return std::nullopt;
  return rs;
}

double shard_runner::elapsed() const { return std::chrono::duration<double>(steady::now() - start_).count(); }

void shard_runner::add_time(oracle_time& t, int64_t runs, steady::time_point since) {
  const double s = std::chrono::duration<double>(steady::now() - since).count();
  std::lock_guard<std::mutex> lock(mu_);
  t.runs += runs;
  t.seconds += s;
}

void shard_runner::guarded_job() {
  go_.wait(false);
  try {
    if (!stop_) job();
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_) error_ = std::current_exception();
    stop_ = true;
  }
  --active_;
}

void shard_runner::job() {
  // Executors are not shared between threads (the gpu batcher is, behind each job's executor).
  const std::unique_ptr<executor> ex =
      batcher_ ? std::make_unique<gpu_campaign_executor>(batcher_) : make_executor(o_.target);
  const std::unique_ptr<executor> sim = batcher_ ? make_executor("sim") : nullptr;
  executor& shrinker = sim ? *sim : *ex;
  while (!stop_) {
    const uint64_t k = next_++;
    const uint64_t i = first_ + k * stride_;
    const bool past_time = o_.seconds && k > 0 && elapsed() >= *o_.seconds;  // one case always runs
    if ((o_.cases && i >= static_cast<uint64_t>(*o_.cases)) || past_time) {
      take(k, std::nullopt);
      return;
    }
    ++started_;
    const auto t0 = steady::now();
    const check_case c = sample_fuzz_case(o_, i);
    report r = gen::run_guarded(c, *ex);
    add_time(case_time_, 1, t0);
    if (!r.ok && sim) {
      const auto t1 = steady::now();
      std::optional<report> confirmed = confirm(c, *sim);
      add_time(confirm_time_, 1, t1);
      if (confirmed) {
        r = std::move(*confirmed);
      } else {
        ++unconfirmed_;
        r = report{};
      }
    }
    shard_outcome out{i, false, {}, {}};
    if (!r.ok) {
      out.failing = true;
      out.raw_signature = gen::signature(c, r);
      if (!kind_taken(out.raw_signature)) {
        const auto t1 = steady::now();
        out.shrunk = shrink_fuzz_failure(o_, c, r, shrinker);
        add_time(shrink_time_, out.shrunk->shrink_evals + 1, t1);
      }
    }
    take(k, std::move(out));
  }
}

bool shard_runner::kind_taken(const std::string& raw) {
  std::lock_guard<std::mutex> lock(kinds_mu_);
  return kinds_.count(raw) != 0;
}

// Holds outcome k until every smaller position is taken, then hands the ready ones over in order.
// An abandoned position (past --cases or --time) closes the shard: every later one is past too.
void shard_runner::take(uint64_t k, std::optional<shard_outcome> out) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.emplace(k, std::move(out));
  while (!closed_ && !pending_.empty() && pending_.begin()->first == taken_) {
    std::optional<shard_outcome> next = std::move(pending_.begin()->second);
    pending_.erase(pending_.begin());
    if (!next) {
      closed_ = true;
      stop_ = true;
      break;
    }
    const shard_outcome& o = *next;
    ++cases_;
    if (o.failing) {
      ++failing_;
      std::lock_guard<std::mutex> kl(kinds_mu_);
      kinds_.insert(o.raw_signature);
    }
    ++taken_;
    sink_.take(o);
  }
}

}  // namespace headroom::cli
