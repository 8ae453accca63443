// A plan file (docs/plan-schema.md, "headroom_plan": 1): the engine settings, the model, and per
// tensor-parallel rank the layers and every attention group's builder as dumped (builder_dump.hpp).
// `headroom plan` writes the mirror's (mirror_plan); `headroom verify` reads an engine's or an
// edited one and checks it with the checker's own sweep (run_verify).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/check/check.hpp"

namespace headroom {

inline constexpr int plan_schema_version = 1;

struct plan_rank {
  int64_t tp = 1;
  std::vector<builder_dump> groups;  // every backend's attention groups of this rank
};

struct plan_file {
  std::string source = "headroom plan";  // who wrote it: headroom, or an engine and its version
  model_geometry model;
  engine_settings engine;                // max_num_seqs bounds the decode sweep of verify
  int64_t block_size = 16;               // KV-cache block size (tokens)
  bool hybrid = true;                    // hybrid KV-cache manager
  kv_layout layout = kv_layout::packed;  // how the KV cache holds K and V (docs/engines.md §10)
  flashinfer_options flashinfer;         // the device facts FlashInfer's planner reads
  std::vector<plan_rank> ranks;
  // Groups the mirror makes no builder for, and why; what --flashinfer-prefill auto chose a group.
  std::vector<std::string> notes;
};

// The mirror's plan: for each tp and backend, the attention groups and the builder each one gets
// under the options' policy, grouping and mutants. Throws input_error for a tp the model cannot take.
plan_file mirror_plan(const model_geometry& m, const check_options& o);

nlohmann::json to_json(const plan_file& p);
// Throws input_error naming file, field and value for a malformed or inconsistent plan: an unknown
// version, a shape that disagrees with its bytes, a negative dimension, a group naming a layer the
// rank does not have, layers of one group with different KV specs, a rank's layer table that
// disagrees with the model at that tp.
plan_file plan_from_json(const nlohmann::json& j, const std::string& file);
plan_file load_plan(const std::string& path);

// The checker on a plan: every group of every rank and backend over the same decode sweep
// (1..engine.max_num_seqs) and prefill / mixed batches as `headroom check`, with the dumped
// parameters and capacities. Violations name buffers as the plan does; each carries its case
// (builders included), so `headroom replay` runs it again.
report run_verify(const plan_file& p, executor& ex, std::optional<double> tight = std::nullopt);
// The cases run_verify sweeps, one per (tp, backend), the rank's groups as their builders.
std::vector<check_case> verify_cases(const plan_file& p);
// run_verify on cases already built by verify_cases(p).
report run_verify(const plan_file& p, const std::vector<check_case>& cases, executor& ex,
                  std::optional<double> tight);

}  // namespace headroom
