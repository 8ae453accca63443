// SGLang's FA3 decode schedule as `headroom plan --engine-flavour sglang --backend fa3` shows it
// (fa3_sglang.hpp): per TP size, the geometry FlashAttentionBackend schedules with (the config's
// heads, kv heads and head_dim over TP), then for each forward that precomputes (eager decode at
// the check's decode length, the largest decode graph's replay and capture) the split count, the
// entries written and the buffer's, and what each distinct non-sliding layer geometry runs with.
// vLLM's FA3 builder is not what SGLang runs, so the plan prints this in place of its groups.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/backends/fa3_sglang.hpp"
#include "core/check/check.hpp"
#include "core/check/plan_file.hpp"

namespace headroom {

// One distinct geometry of the non-sliding layers and what its mha_fwd computes under a pass.
struct sglang_fa3_layer_run {
  int64_t q_heads = 0, kv_heads = 0, head_size = 0, head_size_v = 0;  // v: the layer's V (0: head size)
  int64_t layers = 0;                                                 // how many layers of the rank have it
  int64_t splits = 0;            // the run's own split count (out_accum's first dimension)
  int64_t entries = 0;           // the metadata layout the run expects
  bool shape_fails = false;      // entries differ from the schedule's: CHECK_SHAPE fails
  bool out_accum_short = false;  // the schedule gives a request more splits than the run holds
};

struct sglang_fa3_pass_row {
  sglang_fa3_pass pass = sglang_fa3_pass::none;
  int64_t batch = 0;           // requests (eager) or the graph's batch size
  int64_t sched_keys = 0;      // max_seqlen_k the schedule is told
  int64_t splits = 0;          // the schedule's split count
  int64_t request_splits = 1;  // the most the prepare kernel gives one request
  int64_t entries = 0;         // scheduler_metadata entries written
  int64_t buffer_entries = 0;  // the tensor's (graph passes: the persistent buffer)
  std::vector<sglang_fa3_layer_run> runs;
};

struct sglang_fa3_rank_plan {
  int64_t tp = 1;
  int64_t q_heads = 0, kv_heads = 0, head_size = 0, page_size = 0;  // the schedule's
  int64_t full_layers = 0, sliding_layers = 0;  // layers given the schedule, layers given none
  std::string disabled;                         // non-empty: the settings under which no step precomputes
  std::vector<sglang_fa3_pass_row> passes;
};

// True when `headroom plan` shows SGLang's schedule: the sglang flavour with fa3 among the backends.
bool plans_sglang_fa3(const check_options& o);

// The schedule per TP size of o.tps; eager decode is a batch of 1 and of max_num_seqs requests of
// decode_seq_len keys, the graph passes are the largest capture size's (with FULL graphs only).
std::vector<sglang_fa3_rank_plan> sglang_fa3_plan(const model_geometry& m, const check_options& o);

// The readable form, one block per TP size.
std::string sglang_fa3_plan_text(const std::vector<sglang_fa3_rank_plan>& plans);

// The plan without one backend's groups (what `headroom plan` prints beside SGLang's schedule).
plan_file without_backend(plan_file p, backend be);

}  // namespace headroom
