// Counterexample files: a case JSON (docs/design.md, replayable by `headroom replay`) plus extra keys
// that case_from_json ignores: "expect" (per target, the sorted distinct invariants a replay must
// report; [] means clean), optional "tight" (the --tight K the expectation assumes) and "note".
// `headroom fuzz --out` writes them; the regression corpus (regressions/*.json) is made of them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/check/check.hpp"

namespace headroom::generators {

using expectations = std::map<std::string, std::vector<std::string>>;  // target -> invariants

struct corpus_entry {
  check_case c;
  expectations expect;
  std::optional<double> tight;
  std::string note;
};

// Sorted distinct invariant names of a report.
std::vector<std::string> invariants_of(const report& r);

nlohmann::json to_corpus_json(const corpus_entry& e);
// Throws input_error (file, field) for a malformed case or "expect".
corpus_entry corpus_from_json(const nlohmann::json& j, const std::string& file);
corpus_entry load_corpus_entry(const std::string& path);

}  // namespace headroom::generators
