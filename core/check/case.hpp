// A case (docs/design.md): everything one verdict depends on. It serialises to JSON and back losslessly,
// so a counterexample file is a case and `headroom replay` runs it again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/backends/batch.hpp"
#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"
#include "core/check/builder_dump.hpp"
#include "core/check/mutants.hpp"
#include "core/engine/engine.hpp"
#include "core/engine/settings.hpp"
#include "core/model/geometry.hpp"

namespace headroom {

struct check_case {
  model_geometry model;
  int64_t tp = 1;
  backend be = backend::triton;
  policy pol = policy::per_layer;
  grouping grp = grouping::heads;
  bool hybrid = true;       // hybrid KV-cache manager
  int64_t block_size = 16;  // KV-cache block size (tokens)
  // How the KV cache holds K and V (docs/engines.md §10): packed, vLLM's layout since PR #44455, for
  // a new case; a case file without the field was written before it existed: separate.
  kv_layout layout = kv_layout::packed;
  batch b;
  uint64_t seed = 0;
  engine_settings engine;  // max_num_seqs, max_model_len, CUDA graphs, speculative tokens
  step_spec step;          // which forward of the engine the batch is
  mutant_set mutants;      // historical wrong formulas switched on (core/check/mutants.hpp)
  triton_options triton;
  flashinfer_options flashinfer;
  // When non-empty, every builder resolves its heads from these layer names (the spec-decode
  // proposer path: draft layers that may be missing from the registry -> the fallback).
  std::vector<std::string> builder_names;
  // When non-empty, the attention groups of the case's backend and their plans come from these
  // dumps (headroom verify: an engine's own buffers) instead of the mirror's grouping and formulas.
  std::vector<builder_dump> builders;
  bool operator==(const check_case&) const = default;
};

// The engine part of a case, which the whole-model check and the case generators both choose:
// batch, backend options and builder_names stay at their defaults for the caller to fill.
check_case make_case(const model_geometry& m, int64_t tp, backend be, policy pol, grouping grp, bool hybrid,
                     int64_t block_size, uint64_t seed);

nlohmann::json to_json(const check_case& c);
// Throws input_error naming file and field on anything missing, mistyped or out of range. Within a
// report (check.hpp) a case names its model by index ("model_ref") into the report's `models`; its
// fields are then reported under `path` (e.g. "violations[3].case.").
check_case case_from_json(const nlohmann::json& j, const std::string& file,
                          const std::vector<model_geometry>* models = nullptr, const std::string& path = "");
check_case load_case(const std::string& path);

// A case's step against its engine settings and batch (validate(step_spec, ...), and a draft
// pass's verify batch of at most max_num_seqs requests of at most max_model_len tokens): throws
// input_error naming the field.
void validate_step(const check_case& c, const std::string& file, const std::string& path);

}  // namespace headroom
