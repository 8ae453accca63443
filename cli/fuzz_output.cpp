// headroom fuzz output: counterexample files and their names, the end-of-campaign summary.
#include <cstdio>
#include <filesystem>

#include "cli/engine_flags.hpp"
#include "cli/fuzz_campaign.hpp"
#include "cli/output_file.hpp"
#include "core/util/error.hpp"
#include "generators/corpus.hpp"

namespace headroom::cli {

namespace {

// FNV-1a, for short stable file-name suffixes.
uint32_t fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char ch : s) h = (h ^ ch) * 16777619u;
  return h;
}

std::string size_text(const check_case& c) {
  int64_t attention = 0;
  for (const auto& l : c.model.layers) attention += l.kind != attn_kind::none;
  return std::to_string(c.model.layers.size()) + " layers (" + std::to_string(attention) +
         " with attention), tp " + std::to_string(c.tp) + ", " + std::to_string(c.b.num_seqs()) +
         (c.b.is_decode() ? " decode" : "") + " requests";
}

// True when the file at path is a counterexample that `name` names: it loads (every check of a case
// file) and its case, replayed on ex, fails as the name says.
bool holds_counterexample(const std::string& path, const std::string& name, executor& ex) {
  try {
    const generators::corpus_entry e = generators::load_corpus_entry(path);
    generators::counterexample f;
    f.shrunk = e.c;
    f.shrunk_report = generators::run_guarded(e.c, ex);
    f.signature = generators::signature(e.c, f.shrunk_report);
    // The name carries the kind the case was shrunk for, one of its report's failures (not always
    // the report's primary one).
    for (const auto& v : f.shrunk_report.violations) {
      f.kind = generators::failure_kind{v.inv, v.buffer};
      if (counterexample_file_name(f) == name) return true;
    }
    return false;
  } catch (const input_error&) {
    return false;
  }
}

// One oracle's line: runs per second of the campaign's wall clock, and per second of busy time
// (what one job thread does on its own). wall <= 0: the busy rate only.
void print_oracle(const std::string& name, const oracle_time& t, double wall, const char* what) {
  if (t.runs == 0) return;
  std::printf("  oracle %s: %lld %s", name.c_str(), static_cast<long long>(t.runs), what);
  if (wall > 0) std::printf(", %.0f %s/s (wall clock)", static_cast<double>(t.runs) / wall, what);
  std::printf(", %.0f %s/s per job (%.2f s busy)\n",
              t.seconds > 0 ? static_cast<double>(t.runs) / t.seconds : 0.0, what, t.seconds);
}

}  // namespace

std::string write_counterexample(const fuzz_options& o, fuzz_counterexample& ce, executor& ex) {
  const std::string name = counterexample_file_name(ce.f);
  const std::string path = (std::filesystem::path(*o.out) / name).string();
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    ce.known = holds_counterexample(path, name, ex);  // found by an earlier campaign: not new
    if (ce.known) return path;
    std::fprintf(stderr, "\nfuzz: %s does not hold the counterexample its name says; replacing it\n",
                 path.c_str());
  }
  generators::corpus_entry e;
  e.c = ce.f.shrunk;
  model_executor model;
  e.expect["model"] = generators::invariants_of(generators::run_guarded(e.c, model));
  e.expect[o.target] = generators::invariants_of(ce.f.shrunk_report);
  e.note = "headroom fuzz --seed " + std::to_string(o.seed) + " (case " + std::to_string(ce.index) +
           "): " + ce.f.signature;
  write_durably(path, generators::to_corpus_json(e).dump(2) + "\n");
  return path;
}

std::string counterexample_file_name(const generators::counterexample& f) {
  char hash[16];
  std::snprintf(hash, sizeof hash, "%08x", fnv1a(f.signature));
  std::string name = std::string(to_string(f.shrunk.be)) + "-" + to_string(f.shrunk.pol) + "-" +
                     to_string(f.shrunk.grp) + "-" + to_string(f.kind.inv);
  if (!f.kind.buffer.empty()) name += "-" + f.kind.buffer;
  return name + "-" + hash + ".json";
}

void print_fuzz_summary(const fuzz_options& o, const fuzz_summary& s) {
  std::printf("headroom fuzz: seed %llu, target %s, policy %s, grouping %s, %s%d job%s\n",
              static_cast<unsigned long long>(o.seed), o.target.c_str(),
              to_string(o.profile.policies.front()), to_string(o.profile.groupings.front()),
              s.ranks > 1 ? (std::to_string(s.ranks) + " ranks x ").c_str() : "", o.jobs,
              o.jobs == 1 ? "" : "s");
  if (const std::string pinned = flags_of(o.profile.pins) + flags_of(o.sglang_pins); !pinned.empty())
    std::printf("  every case pinned to%s\n", pinned.c_str());
  std::printf("  %lld cases in %.2f s (%.0f cases/s); %lld failing\n", static_cast<long long>(s.cases),
              s.seconds, s.seconds > 0 ? static_cast<double>(s.cases) / s.seconds : 0.0,
              static_cast<long long>(s.failing));
  if (!s.stopped_by.empty()) std::printf("  stopped early: %s\n", s.stopped_by.c_str());
  print_oracle(o.target + " (cases)", s.case_time, s.seconds, "cases");
  if (o.target == "gpu") {
    print_oracle("sim + gpu checked (confirming)", s.confirm_time, 0, "cases");
    std::printf("  %lld failing batch case%s not confirmed (counted as passing)\n",
                static_cast<long long>(s.unconfirmed), s.unconfirmed == 1 ? "" : "s");
    if (!s.batches.empty()) std::printf("  %s\n", s.batches.c_str());
  }
  print_oracle((o.target == "gpu" ? std::string("sim") : o.target) + " (shrinking)", s.shrink_time, 0,
               "runs");
  if (s.first_failing_index)
    std::printf("  first failing case: index %llu (%llu cases), after %.3f s\n",
                static_cast<unsigned long long>(*s.first_failing_index),
                static_cast<unsigned long long>(*s.first_failing_index + 1), s.first_failing_seconds);
  if (!s.found.empty()) std::printf("  first counterexample written after %.3f s\n", s.found.front().seconds);
  std::printf("  %zu distinct counterexample%s\n", s.found.size(), s.found.size() == 1 ? "" : "s");
  for (std::size_t k = 0; k < s.found.size(); ++k) {
    const auto& ce = s.found[k];
    std::printf(
        "  [%zu] %s\n      shrunk to %s (case %llu, %d steps, %d runs, written after "
        "%.3f s)\n",
        k + 1, ce.f.signature.c_str(), size_text(ce.f.shrunk).c_str(),
        static_cast<unsigned long long>(ce.index), ce.f.shrink_steps, ce.f.shrink_evals, ce.seconds);
    if (!ce.file.empty())
      std::printf("      repro: headroom replay %s --target %s%s\n", ce.file.c_str(), o.target.c_str(),
                  ce.known ? "   (file from an earlier campaign)" : "");
    else
      std::printf("      repro: headroom fuzz --seed %llu --cases %llu --target %s %s\n",
                  static_cast<unsigned long long>(o.seed), static_cast<unsigned long long>(ce.index + 1),
                  o.target.c_str(), o.profile_flags.c_str());
  }
  std::printf("verdict: %s\n", s.found.empty() ? "clean" : "FAIL (counterexamples found)");
  std::fflush(stdout);
}

}  // namespace headroom::cli
