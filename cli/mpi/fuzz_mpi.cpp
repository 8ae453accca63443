// headroom_mpi: the fuzz campaign over MPI ranks (mpi_launch.hpp, docs/campaigns.md). Rank r of N
// runs the shard r, r + N, r + 2N, ... (fuzz_shard.hpp) with --jobs threads, so the union of the
// shards is the case set of one process. Ranks > 0 send each failing outcome to rank 0 as soon as
// their shard hands it over, and their counts every 0.1 s; rank 0 commits everything in index
// order (fuzz_collector.hpp), writes --out, tells the others which raw kinds are taken (so they do
// not shrink them again) and when to stop, and prints progress and the one summary. Only each
// rank's main thread calls MPI (MPI_THREAD_FUNNELED).
#include <mpi.h>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "cli/fuzz_campaign.hpp"
#include "cli/fuzz_collector.hpp"
#include "cli/fuzz_signal.hpp"
#include "cli/fuzz_wire.hpp"
#include "cli/mpi/mpi_channel.hpp"
#include "cli/mpi_launch.hpp"
#include "core/util/error.hpp"
#include "core/util/one_line.hpp"

namespace headroom::cli {

namespace {

using steady = std::chrono::steady_clock;
constexpr auto poll_pause = std::chrono::milliseconds(5);  // between polls with nothing to do
constexpr double counts_every = 0.1;  // s between a rank's counts: rank 0's view of progress
constexpr double stop_grace = 0.5;    // s rank 0 waits for the others after a signal; mpirun
                                      // sends SIGKILL 1 s after SIGTERM (odls_base_sigkill_timeout)

double since(steady::time_point t) { return std::chrono::duration<double>(steady::now() - t).count(); }

// Hands a shard's failing outcomes to the main thread, which sends them (ranks > 0).
struct outbox : shard_sink {
  std::mutex mu;
  std::vector<std::string> messages;
  void take(const shard_outcome& o) override {
    if (!o.failing) return;
    std::lock_guard<std::mutex> lock(mu);
    messages.push_back(encode_outcome(o));
  }
  std::vector<std::string> drain() {
    std::lock_guard<std::mutex> lock(mu);
    return std::exchange(messages, {});
  }
};

struct root_sink : shard_sink {
  fuzz_collector& col;
  explicit root_sink(fuzz_collector& c) : col(c) {}
  void take(const shard_outcome& o) override { col.take(0, o); }
};

// The campaign on rank 0: its own shard, the collector, the other ranks' messages.
int run_root(const fuzz_options& o, const mpi_world& w, shard_runner& shard, fuzz_collector& col,
             steady::time_point start) {
  std::mutex kinds_mu;
  std::vector<std::string> kinds;  // committed raw kinds not yet told to the others
  col.on_kind = [&](const std::string& k) {
    shard.learn_kind(k);
    std::lock_guard<std::mutex> lock(kinds_mu);
    kinds.push_back(k);
  };
  col.on_stop = [&] { shard.stop(); };  // --stop-after met: the others are told below
  std::vector<bool> ended(static_cast<std::size_t>(w.size), false);
  std::string stopped_by;
  bool stop_sent = false;
  std::optional<steady::time_point> signalled;
  const bool tty = ::isatty(2);
  double last_progress = 0;
  for (;;) {
    bool busy = false;
    while (auto m = poll_message(MPI_ANY_SOURCE)) {
      busy = true;
      const std::string from = "rank " + std::to_string(m->from);
      if (m->tag == tag_outcome) col.take(m->from, decode_outcome(m->text, from), true);
      if (m->tag == tag_counts) {
        const shard_counts c = decode_counts(m->text, from);
        ended[static_cast<std::size_t>(m->from)] = c.ended;
        col.update(m->from, c);
      }
      if (m->tag == tag_error) throw input_error(from, "", "", m->text);
    }
    ended[0] = !shard.running();
    col.update(0, counts_of(shard, ended[0]));
    std::vector<std::string> told;
    {
      std::lock_guard<std::mutex> lock(kinds_mu);
      told.swap(kinds);
    }
    for (const auto& k : told)
      for (int r = 1; r < w.size; ++r) send_text(k, r, tag_kind);
    if (const int sig = stop_signal(); sig && !signalled) {
      signalled = steady::now();
      stopped_by = std::string(signal_name(sig)) +
                   " on rank 0 (mpirun sends SIGTERM to every "
                   "rank on Ctrl-C and when a rank dies)";
      std::fprintf(stderr, "\nfuzz: %s: committing what has been found\n", signal_name(sig));
    }
    if ((signalled || col.closed()) && !stop_sent) {
      shard.stop();
      for (int r = 1; r < w.size; ++r) send_text("", r, tag_stop);
      stop_sent = true;
    }
    if (std::find(ended.begin(), ended.end(), false) == ended.end()) break;
    if (signalled && since(*signalled) > stop_grace) break;
    const double t = since(start);
    if (t - last_progress >= (tty ? 0.25 : 5.0)) {
      last_progress = t;
      const shard_counts all = col.totals();
      print_fuzz_progress(tty, all.started, all.failing, col.found(), t);
    }
    if (!busy) std::this_thread::sleep_for(poll_pause);
  }
  if (tty) std::fprintf(stderr, "\n");
  const long lost = std::count(ended.begin(), ended.end(), false);
  if (lost == 0) shard.join();
  fuzz_summary s = col.finish();
  s.ranks = w.size;
  s.stopped_by = stopped_by;
  if (const std::string b = shard.batches(); !b.empty()) s.batches = "rank 0's " + b;
  if (lost) s.stopped_by += "; " + std::to_string(lost) + " rank(s) did not report their end";
  print_fuzz_summary(o, s);
  const int code = s.found.empty() ? 0 : 1;
  if (lost) {  // their jobs may still run: leave without waiting for them
    std::fflush(stderr);
    std::_Exit(code);
  }
  for (int r = 1; r < w.size; ++r) send_text("", r, tag_finish);
  return code;
}

// The campaign on a rank > 0: its shard; failing outcomes and counts to rank 0.
int run_rank(shard_runner& shard, outbox& box) {
  steady::time_point last_counts{};
  for (;;) {
    while (auto m = poll_message(0)) {
      if (m->tag == tag_kind) shard.learn_kind(m->text);
      if (m->tag == tag_stop || m->tag == tag_finish) shard.stop();
    }
    if (stop_signal()) shard.stop();
    const bool ended = !shard.running();
    if (ended || since(last_counts) >= counts_every) {
      const shard_counts c = counts_of(shard, false);  // before the drain: every outcome under
      for (const auto& text : box.drain()) send_text(text, 0, tag_outcome);  // c.next is sent
      send_text(encode_counts(c), 0, tag_counts);
      last_counts = steady::now();
    }
    if (ended) break;
    std::this_thread::sleep_for(poll_pause);
  }
  try {
    shard.join();
  } catch (const std::exception& e) {
    send_text(one_line(e.what()), 0, tag_error);
    return 2;
  }
  for (const auto& text : box.drain()) send_text(text, 0, tag_outcome);
  send_text(encode_counts(counts_of(shard, true)), 0, tag_counts);
  for (;;) {  // rank 0 commits before anyone finalizes
    if (auto m = poll_message(0); m && m->tag == tag_finish) return 0;
    std::this_thread::sleep_for(poll_pause);
  }
}

}  // namespace

int fuzz_under_mpi(int argc, char** argv) {
  const mpi_world w = mpi_start(argc, argv);
  fuzz_options o;
  std::unique_ptr<fuzz_collector> col;
  std::unique_ptr<shard_sink> sink;
  std::unique_ptr<shard_runner> shard;
  std::string error;
  try {  // every rank checks its own input, executor and threads; rank 0 the --out folder
    o = read_fuzz_options(argc, argv);
    if (o.target == "gpu") {  // before the GPU worker starts: it inherits the variable
      const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
      const std::string gpu = gpu_of_rank(visible ? visible : "", w.local_rank, node_gpu_count());
      if (!gpu.empty()) ::setenv("CUDA_VISIBLE_DEVICES", gpu.c_str(), 1);
    }
    make_executor(o.target);
    if (w.rank == 0 && o.out) prepare_fuzz_out(*o.out);
    if (w.rank == 0) {
      col = std::make_unique<fuzz_collector>(o, w.size);
      sink = std::make_unique<root_sink>(*col);
    } else {
      sink = std::make_unique<outbox>();
    }
    shard = std::make_unique<shard_runner>(o, static_cast<uint64_t>(w.rank), static_cast<uint64_t>(w.size),
                                           *sink);
    shard->launch();
  } catch (const std::exception& e) {
    error = one_line(e.what());
  }
  if (const int first = mpi_first_failing(w, !error.empty()); first < w.size) {
    if (first == w.rank)
      std::fprintf(stderr, "headroom: %s%s\n",
                   w.rank ? ("rank " + std::to_string(w.rank) + ": ").c_str() : "", error.c_str());
    shard.reset();
    mpi_end();
    return 2;
  }
  o.seed = mpi_broadcast_seed(o.seed);  // without --seed, rank 0's fresh one
  install_stop_signals();
  const steady::time_point start = mpi_common_start();
  shard->release(start);
  int code = 0;
  try {
    if (w.rank == 0) {
      col->start(start);
      std::fprintf(stderr, "fuzz: seed %llu (repeat with --seed %llu), %d ranks\n",
                   static_cast<unsigned long long>(o.seed), static_cast<unsigned long long>(o.seed), w.size);
      code = run_root(o, w, *shard, *col, start);
    } else {
      code = run_rank(*shard, static_cast<outbox&>(*sink));
    }
  } catch (const std::exception& e) {  // a write that failed on rank 0, a rank's job that threw
    std::fprintf(stderr, "\nheadroom: %s\n", one_line(e.what()).c_str());
    std::fflush(stderr);
    mpi_abort(2);
  }
  shard.reset();
  mpi_end();
  return code;
}

}  // namespace headroom::cli
