// The checker: for each (backend, tp, attention group) resolve the builder's heads, plan, run every
// layer on a sweep of batches through an executor, and turn what it saw into violations and
// thresholds (docs/design.md report JSON). Pure C++; the executor decides model, sim or gpu.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/check/case.hpp"
#include "core/check/executor.hpp"
#include "core/check/finding.hpp"

namespace headroom {

// A finding where it happened: backend, TP size, attention group and its layers, and the case that
// replays it (case_of: the batch that showed it). The case's model is held once per check and
// shared by its violations, since copying it into each would grow memory and the report as
// violations x layers.
struct violation : finding {
  backend be = backend::triton;
  int64_t tp = 1;
  int group = 0;
  std::vector<std::string> layers;
  check_case shell;                             // the replayable case with an empty model
  std::shared_ptr<const model_geometry> model;  // the case's model
};

// The violation's replayable case, whole.
check_case case_of(const violation& v);
// Stores c as v's case (its model in v.model, the rest in v.shell).
void set_case(violation& v, const check_case& c);

// Where a group starts failing: the smallest failing decode batch of the sweep, or for a class
// whose variable is not a decode batch (a capture size, max_model_len, tokens) that variable.
struct threshold {
  backend be = backend::triton;
  int64_t tp = 1;
  int group = 0;
  int64_t builder_heads = 0;
  int64_t layer_heads = 0;                          // the largest head count the group's layers run with
  std::optional<int64_t> min_failing_decode_batch;  // null: none up to max_num_seqs fails
  bug_class cls = bug_class::none;  // a class threshold: its class, variable and smallest value
  std::string variable;
  int64_t min_failing = 0;
};

struct report {
  bool ok = true;
  std::vector<violation> violations;
  std::vector<threshold> thresholds;
  std::vector<std::string> notes;  // info: clean fallbacks, unsupported group sizes, ...
};

// Largest max_num_seqs of a whole-model check. The decode sweep plans every batch 1..N, and a
// batch of n requests costs O(n) to plan, so a check's time grows as N^2 (its memory as N: the
// batches are made one at a time); 4096 keeps a check of the bundled configs to seconds.
inline constexpr int64_t max_check_num_seqs = 4096;

struct check_options {
  std::vector<int64_t> tps = {1};
  std::vector<backend> backends = {backend::triton, backend::flashinfer};
  policy pol = policy::per_layer;
  grouping grp = grouping::heads;
  bool hybrid = true;
  int64_t block_size = 16;
  kv_layout layout = kv_layout::packed;  // vLLM's since PR #44455 (docs/engines.md §10)
  int64_t max_num_seqs = 256;
  int64_t decode_seq_len = 256;  // activates all 16 Triton segments and splits FlashInfer KV
  std::optional<double> tight;   // report tight_bound when a buffer exceeds K x the largest need
  engine_settings engine;        // its max_num_seqs is set to max_num_seqs
  mutant_set mutants;
  triton_options triton;
  // vLLM's FlashInfer decode runs on tensor cores (use_tensor_cores=True in its builder's
  // _get_decode_wrapper since v0.10.2, PR #23214); a case file without the key replays the CUDA-core
  // decode it was written with (docs/engines.md §7).
  flashinfer_options flashinfer{.tensor_core_decode = true};
  uint64_t seed = 0;
};

// Whole-model check (headroom check). `m` has passed validate() (load_model does it); throws
// input_error for a tp the geometry cannot take or out-of-range options.
report run_check(const model_geometry& m, const check_options& o, executor& ex);
// The cases run_check sweeps, one per (tp, backend); the same input_errors.
std::vector<check_case> check_cases(const model_geometry& m, const check_options& o);

// The sweep of a whole-model check on prepared cases, one per (tp, backend), each swept over decode
// batches 1..engine.max_num_seqs of decode_seq_len tokens plus the prefill and mixed batches:
// run_check's loop, shared by verify (plan_file.hpp).
report run_sweep(const std::vector<check_case>& bases, int64_t decode_seq_len, std::optional<double> tight,
                 executor& ex);

// One case (headroom replay, fuzz): the case's backend, tp, policy, grouping and batch only. The
// case has passed validation (case_from_json and the generators make only valid cases).
report run_case(const check_case& c, executor& ex, std::optional<double> tight = std::nullopt);

// The report JSON: every distinct model once under "models", each violation's case naming its
// model by index ("model_ref"), so a report grows with its findings, not findings x layers.
nlohmann::json to_json(const report& r);
// A report's violations as standalone cases (models resolved); throws input_error naming the file
// and field for anything malformed.
std::vector<check_case> cases_from_report(const nlohmann::json& j, const std::string& file);
bool is_report(const nlohmann::json& j);

}  // namespace headroom
