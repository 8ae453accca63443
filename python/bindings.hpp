// What the Python module does, in C++ over JSON documents (python/module.cpp converts Python
// objects): the same calls the command line makes, with the options named as its keyword
// arguments. Bad input throws input_error, which the module raises as headroom.InputError with
// the message the command line prints after "headroom: ".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/check/plan_file.hpp"

namespace headroom::python {

// The keyword arguments of plan and check (docs/plan-schema.md, README "Python").
struct run_options {
  std::vector<int64_t> tp = {1};
  std::string backend;  // empty: the command line's default (triton and flashinfer); "all" adds fa3
  std::string policy = "per-layer";
  std::string grouping = "heads";
  std::string target = "model";
  int64_t max_num_seqs = 256;
  std::vector<std::string> mutants;
  bool hybrid = true;
  bool cuda_graph = false;
  uint64_t seed = 0;
  std::optional<double> tight;
};

// A config: a path (read as the command line reads it) or a document named `name` in messages.
model_geometry config_from_path(const std::string& path);
model_geometry config_from_json(const nlohmann::json& j, const std::string& name);

// check_options from the keyword arguments; input_error names the argument ("arguments", "tp").
check_options check_options_of(const run_options& o);

nlohmann::json plan(const model_geometry& m, const run_options& o);
nlohmann::json check(const model_geometry& m, const run_options& o);
nlohmann::json verify(const plan_file& p, const std::string& target, std::optional<double> tight);

}  // namespace headroom::python
