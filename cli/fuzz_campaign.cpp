// The fuzz campaign (fuzz_campaign.hpp): job threads, deduplication, files, progress on stderr.
// Jobs run and shrink cases in parallel, but their outcomes are taken in case-index order, so a
// campaign's counterexamples and files are the same for any --jobs (and any thread timing).
#include "cli/fuzz_campaign.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>
#include <unistd.h>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "core/util/error.hpp"
#include "generators/corpus.hpp"

namespace headroom::cli {

namespace {

using steady = std::chrono::steady_clock;
namespace gen = headroom::generators;

// What a job found for one case index; `abandoned`: past --cases or --time, not run.
struct outcome {
  bool abandoned = false;
  bool failing = false;
  std::string raw_signature;              // of the unshrunk failure
  std::optional<gen::counterexample> shrunk;     // when its kind was not taken yet as the job saw it
};

class campaign {
 public:
  explicit campaign(const fuzz_options& o) : o_(o), start_(steady::now()) {}

  fuzz_summary run() {
    std::vector<std::thread> jobs;
    try {
      for (int j = 0; j < o_.jobs; ++j) jobs.emplace_back([this] { guarded_job(); });
    } catch (const std::system_error& e) {  // no thread for this job: say so, start none
      const auto started = jobs.size();
      stop_ = true;
      release();
      for (auto& t : jobs) t.join();
      throw input_error(cmdline, "--jobs", std::to_string(o_.jobs),
                        "only " + std::to_string(started) + " job threads could be started (" +
                            e.what() + "); use fewer jobs");
    }
    std::fprintf(stderr, "fuzz: seed %llu (repeat with --seed %llu)\n",
                 static_cast<unsigned long long>(o_.seed), static_cast<unsigned long long>(o_.seed));
    start_ = steady::now();
    release();
    progress_until_done();
    for (auto& t : jobs) t.join();
    if (error_) std::rethrow_exception(error_);
    sum_.seconds = elapsed();
    return sum_;
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(steady::now() - start_).count(); }

  void release() {
    go_ = true;
    go_.notify_all();
  }

  void guarded_job() {
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

  void job() {
    auto ex = make_executor(o_.target);  // executors are not shared between threads
    while (!stop_) {
      const uint64_t i = next_++;
      const bool past_time = o_.seconds && i > 0 && elapsed() >= *o_.seconds;  // case 0 always runs
      if ((o_.cases && i >= static_cast<uint64_t>(*o_.cases)) || past_time) {
        take(i, outcome{true, false, {}, {}}, *ex);
        return;
      }
      const check_case c = gen::sample_case(o_.profile, o_.seed, i);
      const report r = gen::run_guarded(c, *ex);
      ++done_;
      outcome out;
      if (!r.ok) {
        ++failing_;
        out.failing = true;
        out.raw_signature = gen::signature(c, r);
        if (!kind_taken(out.raw_signature)) out.shrunk = gen::shrink_failure(c, r, *ex);
      }
      take(i, std::move(out), *ex);
    }
  }

  bool kind_taken(const std::string& raw) {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_raw_.count(raw) != 0;
  }

  // Holds outcome i until every smaller index is taken, then takes the ready ones in order.
  void take(uint64_t i, outcome out, executor& ex) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.emplace(i, std::move(out));
    while (!closed_ && !pending_.empty() && pending_.begin()->first == taken_) {
      outcome o = std::move(pending_.begin()->second);
      pending_.erase(pending_.begin());
      commit(o, taken_, ex);
      ++taken_;
    }
  }

  void commit(outcome& o, uint64_t i, executor& ex) {
    if (o.abandoned) {
      closed_ = true;  // every later index is past the limit too
      return;
    }
    ++sum_.cases;
    if (!o.failing) return;
    ++sum_.failing;
    if (!sum_.first_failing_index) {
      sum_.first_failing_index = i;
      sum_.first_failing_seconds = elapsed();
    }
    // The first case of each unshrunk kind is shrunk (its job saw the kind as new, since kinds
    // are only taken here, in index order).
    if (!seen_raw_.insert(o.raw_signature).second || !o.shrunk) return;
    if (!seen_.insert(o.shrunk->signature).second) return;
    fuzz_counterexample ce{std::move(*o.shrunk), i, 0, "", false};
    if (o_.out) ce.file = write_counterexample(o_, ce, ex);
    ce.seconds = elapsed();
    std::fprintf(stderr, "\nfuzz: found %s (case %llu, shrunk in %d steps)%s%s%s\n",
                 ce.f.signature.c_str(), static_cast<unsigned long long>(i), ce.f.shrink_steps,
                 ce.file.empty() ? "" : " -> ", ce.file.c_str(),
                 ce.known ? " (already there)" : "");
    sum_.found.push_back(std::move(ce));
    if (o_.stop_after && static_cast<int64_t>(sum_.found.size()) >= *o_.stop_after) {
      stop_ = true;
      closed_ = true;
    }
  }

  void progress_until_done() {
    const bool tty = ::isatty(2);
    const double every = tty ? 0.25 : 5.0;
    double last = 0;
    while (active_ > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const double t = elapsed();
      if (t - last < every) continue;
      last = t;
      std::lock_guard<std::mutex> lock(mu_);
      std::fprintf(stderr, "%sfuzz: %lld cases, %lld failing, %zu counterexamples, %.0f cases/s, %.1f s%s",
                   tty ? "\r" : "", static_cast<long long>(done_.load()),
                   static_cast<long long>(failing_.load()), sum_.found.size(),
                   t > 0 ? static_cast<double>(done_) / t : 0.0, t, tty ? "" : "\n");
    }
    if (tty) std::fprintf(stderr, "\n");
  }

  const fuzz_options& o_;
  steady::time_point start_;
  std::atomic<uint64_t> next_{0};
  std::atomic<int64_t> done_{0}, failing_{0};  // as run, for progress; sum_ counts taken ones
  std::atomic<int> active_{o_.jobs};
  std::atomic<bool> go_{false}, stop_{false};
  std::mutex mu_;
  std::exception_ptr error_;
  std::map<uint64_t, outcome> pending_;
  uint64_t taken_ = 0;
  bool closed_ = false;
  std::set<std::string> seen_raw_, seen_;
  fuzz_summary sum_;
};

}  // namespace

fuzz_summary run_fuzz(const fuzz_options& o) { return campaign(o).run(); }

}  // namespace headroom::cli
