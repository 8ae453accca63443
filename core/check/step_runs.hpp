// The engine steps the catalogue's class checks walk (docs/catalogue.md C3-C8), and how they run:
// a class check lists its probes (a step with the variable it fails at), says which plans each
// probe makes for a layer and which findings its formulas give, and run_probes does the rest:
// every probe on the formulas; on a target that runs kernels, the first probe the formulas fail
// (and the one before it, or the first probe when none fails); the first finding per (invariant,
// buffer) kept, with the number of probes that repeat it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/check/class_checks.hpp"
#include "core/engine/steps.hpp"

namespace headroom {

struct step_probe {
  engine_step st;        // what the kernels and the metadata builders see
  batch where;           // the batch of the replayable case
  std::string variable;  // "decode_batch", "capture_size", "tokens", "draft_pass", "seq_len"
  int64_t value = 0;
  // The kernels read the engine's persistent block table ([rows, width] as planned or dumped),
  // not a table made for the batch: always for dummy runs and draft passes, on request for a
  // scheduled step (C4's probes of the table's own shape).
  bool persistent_table = false;
};

step_mutants step_mutants_of(const check_case& c);

// A scheduled step of b (variable decode_batch for a decode batch, else tokens).
step_probe forward_probe(const check_case& c, const batch& b);
// The dummy run of a capture size (variable capture_size).
step_probe dummy_probe(const check_case& c, const step_spec& spec);
// Draft pass `pass` after the verify batch (variable draft_pass).
step_probe draft_probe(const check_case& c, const batch& verify, int64_t pass);

// The case's own step; none for a scheduled step of more requests than max_num_seqs (the
// scheduler never makes one).
std::vector<step_probe> case_probes(const check_case& c);
// Sweeps: decode batches of 1..max_num_seqs requests of 1 + k tokens (seq_len min(256,
// max_model_len)); the dummy runs of every FULL graph; draft passes 1..k (and the capture's pass 0
// when FULL graphs exist and k >= 1) after verify batches of 1 and max_num_seqs requests.
std::vector<step_probe> decode_probes(const check_case& c);
std::vector<step_probe> dummy_probes(const check_case& c);
std::vector<step_probe> draft_probes(const check_case& c);

// The group's first layer of each geometry: heads, kv heads, head size, head size v, sliding window
// and compression ratio (a kernel's call and buffers differ with each).
std::vector<const rank_layer*> group_layers(const group_context& ctx);

using probe_plans = std::function<std::vector<planned_part>(const step_probe&, const rank_layer&)>;
// Formula findings of a probe: plan_run_shape is reported on every target (a run-time check that
// raises), capacity findings on the formulas only (the other targets observe the access).
using probe_formulas = std::function<std::vector<finding>(const step_probe&)>;

// Findings without a class get `cls` (C3 when the step has more metadata rows than max_num_seqs:
// vLLM #19171's dummy); a run's findings of another class are left to the checks of that class.
void run_probes(const class_scope& s, const std::vector<step_probe>& probes, const probe_plans& plans,
                const probe_formulas& formulas, bug_class cls, std::vector<class_finding>& out);

}  // namespace headroom
