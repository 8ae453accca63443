// The fuzz campaign (fuzz_campaign.hpp): job threads, deduplication, files, progress on stderr.
#include "cli/fuzz_campaign.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "generators/corpus.hpp"

namespace headroom::cli {

namespace {

using steady = std::chrono::steady_clock;
namespace gen = headroom::generators;

class campaign {
 public:
  explicit campaign(const fuzz_options& o) : o_(o), start_(steady::now()) {}

  fuzz_summary run() {
    std::vector<std::thread> jobs;
    active_ = o_.jobs;
    for (int j = 0; j < o_.jobs; ++j) jobs.emplace_back([this] { guarded_job(); });
    progress_until_done();
    for (auto& t : jobs) t.join();
    if (error_) std::rethrow_exception(error_);
    sum_.cases = done_;
    sum_.failing = failing_;
    sum_.seconds = elapsed();
    return sum_;
  }

 private:
  double elapsed() const {
    return std::chrono::duration<double>(steady::now() - start_).count();
  }

  void guarded_job() {
    try {
      job();
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
      if (o_.cases && i >= static_cast<uint64_t>(*o_.cases)) break;
      if (o_.seconds && elapsed() >= *o_.seconds) break;
      const check_case c = gen::sample_case(o_.profile, o_.seed, i);
      const report r = gen::run_guarded(c, *ex);
      ++done_;
      if (r.ok) continue;
      ++failing_;
      if (!first_of_kind(i, gen::signature(c, r))) continue;
      gen::finding f = gen::shrink_failure(c, r, *ex);
      record(std::move(f), i);
    }
  }

  // Notes the failing case; true when no failure with this (unshrunk) signature was shrunk yet.
  bool first_of_kind(uint64_t i, const std::string& sig) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!sum_.first_failing_index || i < *sum_.first_failing_index) {
      if (!sum_.first_failing_index) sum_.first_failing_seconds = elapsed();
      sum_.first_failing_index = i;
    }
    return seen_raw_.insert(sig).second;
  }

  void record(gen::finding f, uint64_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!seen_.insert(f.signature).second) return;
    fuzz_counterexample ce{std::move(f), i, 0, ""};
    if (o_.out) ce.file = write(ce);
    ce.seconds = elapsed();
    std::fprintf(stderr, "\nfuzz: found %s (case %llu, shrunk in %d steps)%s%s%s\n",
                 ce.f.signature.c_str(), static_cast<unsigned long long>(i), ce.f.shrink_steps,
                 ce.file.empty() ? "" : " -> ", ce.file.c_str(),
                 ce.known ? " (already there)" : "");
    sum_.found.push_back(std::move(ce));
    if (o_.stop_after && static_cast<int64_t>(sum_.found.size()) >= *o_.stop_after) stop_ = true;
  }

  // Writes the counterexample with what the model and the target report for it.
  std::string write(fuzz_counterexample& ce) {
    const std::string path =
        (std::filesystem::path(*o_.out) / counterexample_file_name(ce.f)).string();
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {  // found by an earlier campaign: not new
      ce.known = true;
      return path;
    }
    gen::corpus_entry e;
    e.c = ce.f.shrunk;
    model_executor model;
    e.expect["model"] = gen::invariants_of(gen::run_guarded(e.c, model));
    e.expect[o_.target] = gen::invariants_of(ce.f.shrunk_report);
    e.note = "headroom fuzz --seed " + std::to_string(o_.seed) + " (case " +
             std::to_string(ce.index) + "): " + ce.f.signature;
    write_durably(path, gen::to_corpus_json(e).dump(2) + "\n");
    return path;
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
  std::atomic<int64_t> done_{0}, failing_{0};
  std::atomic<int> active_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::exception_ptr error_;
  std::set<std::string> seen_raw_, seen_;
  fuzz_summary sum_;
};

}  // namespace

fuzz_summary run_fuzz(const fuzz_options& o) { return campaign(o).run(); }

}  // namespace headroom::cli
