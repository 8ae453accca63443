// The campaign's collector (fuzz_collector.hpp): in-order commits, deduplication, files.
#include "cli/fuzz_collector.hpp"

#include <algorithm>
#include <cstdio>

#include "cli/commands.hpp"
#include "generators/search.hpp"

namespace headroom::cli {

namespace gen = headroom::generators;

shard_counts counts_of(const shard_runner& r, bool ended) {
  shard_counts c;
  c.next = r.next_index();
  c.ended = ended;
  c.cases = r.cases();
  c.failing = r.failing();
  c.started = r.started();
  c.case_time = r.case_time();
  c.shrink_time = r.shrink_time();
  c.confirm_time = r.confirm_time();
  c.unconfirmed = r.unconfirmed();
  return c;
}

fuzz_collector::fuzz_collector(const fuzz_options& o, int shards)
    : o_(o), shards_(shards), counts_(static_cast<std::size_t>(shards)) {
  for (int s = 0; s < shards; ++s) counts_[static_cast<std::size_t>(s)].next = static_cast<uint64_t>(s);
}

fuzz_collector::~fuzz_collector() = default;

double fuzz_collector::elapsed() const {
  return std::chrono::duration<double>(steady::now() - start_).count();
}

// The executor that replays a received counterexample: the one its shard shrank it on, so that a
// file's expectations are what one process writes (the simulator for the GPU target, whose
// campaign runs shrink there; a replay on the device would observe through other oracles).
executor& fuzz_collector::ex() {
  if (!ex_) ex_ = make_executor(o_.target == "gpu" ? "sim" : o_.target);
  return *ex_;
}

void fuzz_collector::take(int shard, const shard_outcome& o, bool remote) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;  // a job still running after the summary (a stop that did not wait)
  auto& c = counts_[static_cast<std::size_t>(shard)];
  c.next = std::max(c.next, o.index + static_cast<uint64_t>(shards_));
  if (o.failing) failures_.emplace(o.index, std::make_pair(o, remote));
  advance();
}

void fuzz_collector::update(int shard, const shard_counts& n) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  auto& c = counts_[static_cast<std::size_t>(shard)];
  const uint64_t next = std::max(c.next, n.next);
  c = n;
  c.next = next;
  advance();
}

bool fuzz_collector::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

shard_counts fuzz_collector::totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return summed();
}

shard_counts fuzz_collector::summed() const {
  shard_counts t;
  for (const auto& c : counts_) {
    t.cases += c.cases;
    t.failing += c.failing;
    t.started += c.started;
    t.case_time.runs += c.case_time.runs;
    t.case_time.seconds += c.case_time.seconds;
    t.shrink_time.runs += c.shrink_time.runs;
    t.shrink_time.seconds += c.shrink_time.seconds;
    t.confirm_time.runs += c.confirm_time.runs;
    t.confirm_time.seconds += c.confirm_time.seconds;
    t.unconfirmed += c.unconfirmed;
  }
  return t;
}

std::size_t fuzz_collector::found() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sum_.found.size();
}

// Commits every index whose shard has reported it, in order; stops at the first one not reported.
void fuzz_collector::advance() {
  while (!closed_) {
    const auto& c = counts_[static_cast<std::size_t>(taken_ % static_cast<uint64_t>(shards_))];
    if (taken_ >= c.next) return;
    if (auto it = failures_.find(taken_); it != failures_.end()) {
      commit(it->second.first, it->second.second);
      failures_.erase(it);
    }
    ++taken_;
  }
}

void fuzz_collector::commit(shard_outcome& o, bool remote) {
  if (!sum_.first_failing_index || o.index < *sum_.first_failing_index) {
    sum_.first_failing_index = o.index;
    sum_.first_failing_seconds = elapsed();
  }
  // The first case of each raw kind is shrunk (its shard saw the kind as new: kinds are only
  // taken here and in each shard's own order, both by increasing index).
  if (!seen_raw_.insert(o.raw_signature).second || !o.shrunk) return;
  if (on_kind) on_kind(o.raw_signature);
  gen::counterexample& f = *o.shrunk;
  if (remote) {  // replayed here: the file's expectations come from this process's own run
    f.shrunk_report = gen::run_guarded(f.shrunk, ex());
    if (gen::signature(f.shrunk, f.shrunk_report) != f.signature)
      std::fprintf(stderr, "\nfuzz: case %llu replays as %s here, not %s as where it was found\n",
                   static_cast<unsigned long long>(o.index),
                   gen::signature(f.shrunk, f.shrunk_report).c_str(), f.signature.c_str());
  }
  if (!seen_.insert(f.signature).second) return;
  fuzz_counterexample ce{std::move(f), o.index, 0, "", false};
  if (o_.out) ce.file = write_counterexample(o_, ce, ex());
  ce.seconds = elapsed();
  std::fprintf(stderr, "\nfuzz: found %s (case %llu, shrunk in %d steps)%s%s%s\n", ce.f.signature.c_str(),
               static_cast<unsigned long long>(o.index), ce.f.shrink_steps, ce.file.empty() ? "" : " -> ",
               ce.file.c_str(), ce.known ? " (already there)" : "");
  sum_.found.push_back(std::move(ce));
  if (o_.stop_after && static_cast<int64_t>(sum_.found.size()) >= *o_.stop_after) {
    closed_ = true;
    if (on_stop) on_stop();
  }
}

fuzz_summary fuzz_collector::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  finished_ = true;
  advance();
  if (!closed_ && !failures_.empty()) {
    std::fprintf(stderr,
                 "\nfuzz: committing what was found past case %llu, the first case not "
                 "reported\n",
                 static_cast<unsigned long long>(taken_));
    while (!closed_ && !failures_.empty()) {
      auto it = failures_.begin();
      commit(it->second.first, it->second.second);
      failures_.erase(it);
    }
  }
  const shard_counts t = summed();
  sum_.cases = t.cases;
  sum_.failing = t.failing;
  sum_.case_time = t.case_time;
  sum_.shrink_time = t.shrink_time;
  sum_.confirm_time = t.confirm_time;
  sum_.unconfirmed = t.unconfirmed;
  sum_.seconds = elapsed();
  return sum_;
}

}  // namespace headroom::cli
