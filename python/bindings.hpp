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
  std::optional<std::vector<int64_t>> tp;  // nullopt: engine_args' tensor_parallel_size, else 1
  std::string backend;  // empty: the command line's default (triton and flashinfer); "all" adds fa3
  std::string policy = "per-layer";
  std::string grouping = "heads";
  std::string target = "model";
  // The engine settings given as keyword arguments, named as vLLM names them (max_num_seqs,
  // block_size, num_speculative_tokens, cudagraph_mode, ...; SGLang's max_running_requests,
  // attn_tp_size, gathered_buffer, enable_two_batch_overlap, attn_cp_size; flashinfer_decode,
  // flashinfer_prefill, batch_invariant): read as the command line's engine flags are (cli/engine_flags.hpp),
  // reported as "arguments" and the keyword.
  nlohmann::json settings = nlohmann::json::object();
  // vLLM's engine arguments (null: none), read as --engine-args is and reported as
  // engine_args_name (the path of a file, or "engine_args"); the keyword arguments override them.
  nlohmann::json engine_args;
  std::string engine_args_name = "engine_args";
  std::vector<std::string> mutants;
  bool hybrid = true;
  bool cuda_graph = false;
  uint64_t seed = 0;
  std::optional<double> tight;
};

// A config: a path (read as the command line reads it) or a document named `name` in messages.
model_geometry config_from_path(const std::string& path);
model_geometry config_from_json(const nlohmann::json& j, const std::string& name);

// check_options from the keyword arguments, and the dtype the engine settings give the model
// (nullopt: the config's); input_error names the argument ("arguments", "tp") or the engine
// arguments' key.
struct run_settings {
  check_options options;
  std::optional<dtype> kv_dtype;
  kv_quant kv_cache = kv_quant::none;  // kv_cache_dtype fp8 / fp8_e4m3 / fp8_e5m2
  std::string kv_cache_given;          // kv_cache_dtype as given, for messages
};
run_settings settings_of(const run_options& o);

nlohmann::json plan(model_geometry m, const run_options& o);
nlohmann::json check(model_geometry m, const run_options& o);
// verify on plan `p` named `name` (its path, or what the caller calls it): the command line's
// refusals (cli::refused_or_verify_cases) and sweep.
nlohmann::json verify(const plan_file& p, const std::string& target, std::optional<double> tight,
                      const std::string& name);

}  // namespace headroom::python
