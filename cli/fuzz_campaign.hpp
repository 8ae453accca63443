// headroom fuzz, the campaign: sample cases from (seed, index) with the generators, run each on a
// target (one executor per job thread), shrink every failure of a new kind, deduplicate by
// signature and write each new counterexample to --out as soon as it is found (atomically).
// One process runs every index (fuzz_shard.hpp, fuzz_collector.hpp); under MPI each rank runs a
// shard and rank 0 collects (fuzz_mpi.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/engine_flags.hpp"
#include "core/check/check.hpp"
#include "generators/case_gen.hpp"
#include "generators/search.hpp"

namespace headroom::cli {

struct fuzz_options {
  uint64_t seed = 0;
  std::optional<int64_t> cases;       // stop after this many cases ...
  std::optional<double> seconds;      // ... or after this long
  std::optional<int64_t> stop_after;  // ... or after this many distinct counterexamples
  std::string target = "sim";
  generators::case_profile profile;
  sglang_settings sglang_pins;     // SGLang's settings every case takes (profile.pins has no field for them)
  std::optional<std::string> out;  // folder for counterexample files
  int jobs = 1;
  std::string kv_cache_given;  // --kv-cache-dtype as given, for messages
  std::string profile_flags;   // the flags that shape the cases, for repro lines
};

// Busy time of one oracle, summed over job threads (and ranks).
struct oracle_time {
  int64_t runs = 0;
  double seconds = 0;
};

struct fuzz_counterexample {
  generators::counterexample f;
  uint64_t index = 0;  // case index it was sampled at
  double seconds = 0;  // since the start, when written
  std::string file;    // empty without --out
  bool known = false;  // the file was already in --out (an earlier campaign's)
};

struct fuzz_summary {
  int64_t cases = 0;
  int64_t failing = 0;
  double seconds = 0;
  std::optional<uint64_t> first_failing_index;  // smallest index of a failing case
  double first_failing_seconds = 0;             // when the first failing case was seen
  std::vector<fuzz_counterexample> found;       // in the order they were written
  oracle_time case_time;                        // the target on sampled cases
  oracle_time shrink_time;                      // the target while shrinking failures
  // --target gpu: failing cases re-run on the simulator and the device-checked build, and how many
  // of the campaign batches' failures they did not confirm (those count as passing).
  oracle_time confirm_time;
  int64_t unconfirmed = 0;
  std::string batches;     // --target gpu: what the batcher did, one line
  int ranks = 1;           // MPI processes
  std::string stopped_by;  // a signal or a lost rank ended it early; empty otherwise
};

// The fuzz command line (input_error on anything bad); a fresh seed when --seed is not given.
fuzz_options read_fuzz_options(int argc, char** argv);
// Creates --out when missing; a path that exists and is not a folder, or a folder nothing can be
// written to, is bad input (before the first case runs). Temporaries that killed campaigns left
// there are removed.
void prepare_fuzz_out(const std::string& dir);

// The campaign in this one process (under MPI: fuzz_mpi.hpp).
fuzz_summary run_fuzz(const fuzz_options& o);

// Case `index` of the campaign: the generators' sample (profile.pins taken instead of draws) with
// SGLang's pinned settings written over the drawn ones (fuzz_pins.cpp).
check_case sample_fuzz_case(const fuzz_options& o, uint64_t index);
// True when `c` has every pinned setting of the campaign, SGLang's too.
bool keeps_pins(const fuzz_options& o, const check_case& c);
// generators::shrink_failure, every candidate keeping every pin of the campaign.
generators::counterexample shrink_fuzz_failure(const fuzz_options& o, const check_case& c, const report& r,
                                               executor& ex);

// One progress line on stderr for the whole campaign (a tty: rewritten in place).
void print_fuzz_progress(bool tty, int64_t started, int64_t failing, std::size_t found, double t);

// Writes ce's file into o.out (write_durably) and returns its path. A file of that name already
// there is kept (ce.known) only when it holds a counterexample of that name, replayed on `ex`;
// anything else there (garbage, a case of another kind) is replaced.
std::string write_counterexample(const fuzz_options& o, fuzz_counterexample& ce, executor& ex);

// The counterexample file's name: backend-policy-grouping-invariant[-buffer]-hash.json.
std::string counterexample_file_name(const generators::counterexample& f);

// The summary block on stdout.
void print_fuzz_summary(const fuzz_options& o, const fuzz_summary& s);

}  // namespace headroom::cli
