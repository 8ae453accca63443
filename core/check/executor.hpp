// Targets: who runs a planned kernel and reports what it touched. The model executor answers from
// the sizing formulas; the simulator (kernels/sim) runs the kernel bodies with checked views; the
// GPU executor runs them on a device with guard bands. The checker turns observations into verdicts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/backends/batch.hpp"
#include "core/backends/plan.hpp"
#include "core/engine/engine.hpp"
#include "core/engine/steps.hpp"
#include "core/model/geometry.hpp"

namespace headroom {

// The oracles: the sizing formulas, the functional simulator, a GPU running headroom's bodies, and
// a GPU running the engines' own kernels in the same guarded arenas (targets/engine/).
enum class target_kind { model, sim, gpu, engine };
const char* to_string(target_kind t);

// One kernel run of one layer on one plan.
struct run_request {
  const rank_layer* layer = nullptr;
  dtype kv_dtype = dtype::bf16;  // KV cache, query and output dtype
  int64_t block_size = 16;       // KV-cache block (page) size in tokens
  const any_plan* plan = nullptr;
  const batch* b = nullptr;
  uint64_t seed = 0;  // input data
  // A dummy run or a draft pass (core/engine/steps.hpp): the attention kernels then read the
  // engine's persistent inputs (block table [max_num_seqs][width], seq_lens, query_start) and a q
  // of the step's rows. Null: compact inputs made for the batch alone.
  const engine_step* step = nullptr;
  int64_t max_num_seqs = 0, table_width = 0;  // the persistent shapes, with `step`
  kv_layout layout = kv_layout::separate;     // how the KV cache holds K and V (docs/engines.md §10)
};

// One out-of-bounds access, attributed (Kokkos style: buffer, index, extent).
struct access_record {
  std::string buffer;
  bool write = true;
  int64_t index = 0;   // element index
  int64_t extent = 0;  // elements in the buffer
  int64_t block[3] = {0, 0, 0};
  int64_t thread[3] = {0, 0, 0};
};

struct observation {
  std::vector<buffer_need> touched;  // per buffer: largest index accessed + 1 (may exceed extent)
  // sim: per buffer stored to, largest index stored + 1 (what a guard band can see; a read past
  // the end, such as a merge reading partial rows no kernel wrote, shows in touched only)
  std::vector<buffer_need> written;
  std::vector<access_record> oob;   // first few out-of-bounds accesses
  int64_t oob_count = 0;            // all of them
  int64_t uninitialized_reads = 0;  // reads of never-written scratch or shared memory
  // Of those, the reads past a work list's planner-written entries (FlashInfer's request / tile
  // indices past new_batch_size when the grid is larger and no block_valid_mask covers it: C10).
  // Formulas: one per padded block and kv head for each of the three index arrays; gpu: the
  // device-checked run's count (the only uninitialized reads a device can see).
  int64_t worklist_uninitialized_reads = 0;
  // sim: the launch stopped early after too many violations (sim_context's max_violations), so the
  // counts above are lower bounds (garbage indices can make a million accesses out of bounds).
  bool incomplete = false;
  int64_t races = 0;            // shared-memory hazards across a missing barrier
  int64_t index_overflows = 0;  // 32-bit offset arithmetic that wrapped (ctx.offset32)
  bool output_checked = false;  // the executor compared the output with a reference
  bool output_mismatch = false;
  std::string mismatch_detail;      // first few mismatches with indices
  int64_t rows_never_computed = 0;  // prefill: (token, head) pairs no tile covers
  bool guard_corrupted = false;     // gpu: canary bytes changed
  std::string guard_detail;
  bool faulted = false;  // gpu: the launch faulted (illegal address, ...)
  std::string fault_detail;
};

class executor {
 public:
  virtual ~executor() = default;
  virtual target_kind kind() const = 0;
  const char* name() const { return to_string(kind()); }
  // Cheap enough to run every batch of a sweep: the formulas are; the kernels run a selection.
  bool exhaustive() const { return kind() == target_kind::model; }
  virtual observation run(const run_request& r) = 0;
};

// What the sizing formulas say one run of `layer` on `plan` over `b` touches, and for prefill the
// rows no tile covers: the model executor's answer, and what the properties hold plans to.
observation model_observation(const any_plan& plan, const rank_layer& layer, const batch& b, dtype kv_dtype);

// The formulas as an executor: touched = what the sizing model says the run needs.
class model_executor final : public executor {
 public:
  target_kind kind() const override { return target_kind::model; }
  observation run(const run_request& r) override;
};

// Throws input_error for a plan only the formulas judge (PrefillSM90Plan: no body here runs it),
// naming `target`; the executors that run bodies call it first (check refuses such cases before).
void refuse_model_only_plan(const run_request& r, target_kind target);

}  // namespace headroom
