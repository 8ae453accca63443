// The fuzz campaign in one process (fuzz_campaign.hpp): one shard over every index, its collector,
// progress on stderr, a clean stop on Ctrl-C or SIGTERM.
#include "cli/fuzz_campaign.hpp"

#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <thread>

#include "cli/fuzz_collector.hpp"
#include "cli/fuzz_shard.hpp"
#include "cli/fuzz_signal.hpp"

namespace headroom::cli {

namespace {

struct collector_sink : shard_sink {
  fuzz_collector& col;
  explicit collector_sink(fuzz_collector& c) : col(c) {}
  void take(const shard_outcome& o) override { col.take(0, o); }
};

}  // namespace

void print_fuzz_progress(bool tty, int64_t started, int64_t failing, std::size_t found, double t) {
  std::fprintf(stderr, "%sfuzz: %lld cases, %lld failing, %zu counterexamples, %.0f cases/s, %.1f s%s",
               tty ? "\r" : "", static_cast<long long>(started), static_cast<long long>(failing), found,
               t > 0 ? static_cast<double>(started) / t : 0.0, t, tty ? "" : "\n");
}

fuzz_summary run_fuzz(const fuzz_options& o) {
  using steady = std::chrono::steady_clock;
  fuzz_collector col(o, 1);
  collector_sink sink(col);
  shard_runner shard(o, 0, 1, sink);
  col.on_stop = [&] { shard.stop(); };
  install_stop_signals();
  const auto start = steady::now();
  shard.start(start);  // an input_error (--jobs) before anything is printed
  col.start(start);
  std::fprintf(stderr, "fuzz: seed %llu (repeat with --seed %llu)\n", static_cast<unsigned long long>(o.seed),
               static_cast<unsigned long long>(o.seed));
  const bool tty = ::isatty(2);
  const double every = tty ? 0.25 : 5.0;
  double last = 0;
  std::string stopped_by;
  while (shard.running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (const int sig = stop_signal(); sig && stopped_by.empty()) {
      stopped_by = signal_name(sig);
      std::fprintf(stderr, "\nfuzz: %s: stopping after the cases running now\n", stopped_by.c_str());
      shard.stop();
    }
    const double t = std::chrono::duration<double>(steady::now() - start).count();
    if (t - last < every) continue;
    last = t;
    print_fuzz_progress(tty, shard.started(), shard.failing(), col.found(), t);
  }
  if (tty) std::fprintf(stderr, "\n");
  shard.join();
  col.update(0, counts_of(shard, true));
  fuzz_summary s = col.finish();
  s.stopped_by = stopped_by;
  s.batches = shard.batches();
  return s;
}

}  // namespace headroom::cli
