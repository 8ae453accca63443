// The checker: for each (backend, tp, attention group) resolve the builder's heads, plan, run every
// layer on a sweep of batches through an executor, and turn what it saw into violations and
// thresholds (DESIGN.md report JSON). Pure C++; the executor decides model, sim or gpu.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/check/case.hpp"
#include "core/check/executor.hpp"

namespace headroom {

// Invariant names, exactly as in DESIGN.md.
namespace inv {
inline constexpr const char* group_agreement = "group_agreement";
inline constexpr const char* fallback_when_empty = "fallback_when_empty";
inline constexpr const char* buffer_capacity = "buffer_capacity";
inline constexpr const char* plan_run_heads = "plan_run_heads";
inline constexpr const char* tight_bound = "tight_bound";
inline constexpr const char* index_overflow = "index_overflow";
inline constexpr const char* out_of_bounds = "out_of_bounds";
inline constexpr const char* output_mismatch = "output_mismatch";
inline constexpr const char* guard_corrupted = "guard_corrupted";
}  // namespace inv

struct violation {
  std::string invariant;
  backend be = backend::triton;
  int64_t tp = 1;
  int group = 0;
  std::vector<std::string> layers;
  std::string buffer;             // empty when not about one buffer
  int64_t capacity_bytes = 0;
  int64_t required_bytes = 0;
  std::string detail;             // one readable sentence
  check_case repro;               // a full, replayable case
};

struct threshold {
  backend be = backend::triton;
  int64_t tp = 1;
  int group = 0;
  int64_t builder_heads = 0;
  int64_t layer_heads = 0;  // the largest head count the group's layers run with
  std::optional<int64_t> min_failing_decode_batch;  // null: none up to max_num_seqs fails
};

struct report {
  bool ok = true;
  std::vector<violation> violations;
  std::vector<threshold> thresholds;
  std::vector<std::string> notes;  // info: clean fallbacks, unsupported group sizes, ...
};

// Largest max_num_seqs of a whole-model check. run_check builds the decode batches 1..N up front
// (N^2 / 2 request lengths of 16 bytes) and plans each one (time ~N^2): 4096 measured ~140 MB and
// under 1 s per tp on the bundled configs with the model target; 65536 would need ~34 GB.
inline constexpr int64_t max_check_num_seqs = 4096;

struct check_options {
  std::vector<int64_t> tps = {1};
  std::vector<backend> backends = {backend::triton, backend::flashinfer};
  policy pol = policy::per_layer;
  grouping grp = grouping::heads;
  bool hybrid = true;
  int64_t block_size = 16;
  int64_t max_num_seqs = 256;
  int64_t decode_seq_len = 256;       // activates all 16 Triton segments and splits FlashInfer KV
  std::optional<double> tight;        // report tight_bound when a buffer exceeds K x the largest need
  triton_options triton;
  flashinfer_options flashinfer;
  uint64_t seed = 0;
};

// Whole-model check (headroom check). Throws input_error for bad geometry / tp.
report run_check(const model_geometry& m, const check_options& o, executor& ex);

// One case (headroom replay, fuzz): the case's backend, tp, policy, grouping and batch only.
report run_case(const check_case& c, executor& ex, std::optional<double> tight = std::nullopt);

nlohmann::json to_json(const report& r);
nlohmann::json to_json(const violation& v);

}  // namespace headroom
