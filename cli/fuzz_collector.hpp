// The campaign's one collector (the single process, or MPI rank 0): merges the outcomes of every
// shard (shard s runs the indices s, s + N, ...) and commits them in global index order, so the
// counterexamples, their files and the summary are those of one process on the same seed and
// case count, whatever the number of shards and their timing. Committing a failure: the first case
// of each raw kind is the one kept; its shrunk counterexample is deduplicated by signature and
// written to --out at once. When the campaign ends with a hole in the index order (--time, a stop,
// a shard lost), finish() still commits everything received, in index order past the holes:
// nothing found is dropped.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cli/fuzz_campaign.hpp"
#include "cli/fuzz_shard.hpp"

namespace headroom::cli {

// What a shard has run and reported so far (for progress and the summary).
struct shard_counts {
  uint64_t next = 0;   // every smaller index of the shard is reported
  bool ended = false;  // nothing more will come
  int64_t cases = 0, failing = 0, started = 0;
  oracle_time case_time, shrink_time, confirm_time;
  int64_t unconfirmed = 0;
};

// A shard's counts as they stand (ended: it will run nothing more).
shard_counts counts_of(const shard_runner& r, bool ended);

class fuzz_collector {
 public:
  using steady = std::chrono::steady_clock;
  fuzz_collector(const fuzz_options& o, int shards);
  ~fuzz_collector();

  void start(steady::time_point t) { start_ = t; }
  // Called (under the collector's lock) for every raw kind committed, and when --stop-after is met.
  std::function<void(const std::string&)> on_kind;
  std::function<void()> on_stop;

  // A shard's outcome, in its index order; moves its frontier past o.index. A counterexample from
  // another process has no report yet (remote): it is replayed here before it is committed.
  void take(int shard, const shard_outcome& o, bool remote = false);
  // The shard's counts; c.next moves its frontier (every smaller index of it is reported).
  void update(int shard, const shard_counts& c);
  bool closed() const;
  shard_counts totals() const;  // summed over shards (next, ended: unused)
  std::size_t found() const;

  // Commits what is left, past any holes in the index order; the campaign's summary.
  fuzz_summary finish();

 private:
  void advance();
  void commit(shard_outcome& o, bool remote);
  shard_counts summed() const;
  executor& ex();
  double elapsed() const;

  const fuzz_options& o_;
  const int shards_;
  steady::time_point start_ = steady::now();
  mutable std::mutex mu_;
  std::vector<shard_counts> counts_;
  std::map<uint64_t, std::pair<shard_outcome, bool>> failures_;  // index -> outcome, remote
  uint64_t taken_ = 0;                                           // every smaller index committed
  bool closed_ = false;
  bool finished_ = false;  // the summary is made: nothing more is taken
  std::set<std::string> seen_raw_, seen_;
  std::unique_ptr<executor> ex_;
  fuzz_summary sum_;
};

}  // namespace headroom::cli
