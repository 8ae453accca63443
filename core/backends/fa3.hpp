// FlashAttention-3's ahead-of-time scheduler metadata (vLLM FLASH_ATTN on FA 3, docs/catalogue.md
// C3): the persistent int32 buffer vLLM's builder allocates under FULL CUDA graphs, the layout
// vllm-project/flash-attention's mha_fwd_get_scheduler_metadata writes into it for a batch, and the
// size mha_fwd recomputes and checks at run time (CHECK_SHAPE).
#pragma once

#include <cstdint>
#include <vector>

#include "core/backends/buffers.hpp"
#include "core/engine/steps.hpp"

namespace headroom {

inline constexpr int64_t fa3_varlen_max_batches = 992;  // PREPARE_VARLEN_MAX_BATCHES_1CTA
inline constexpr int64_t fa3_graph_max_splits = 16;     // vLLM's max_num_splits for CUDA graphs
inline constexpr int64_t fa3_num_sms = 132;             // H100 / H200: the split heuristic's SMs
inline constexpr int64_t fa3_block = 128;               // kBlockM / kBlockN of the heuristic

// The historical wrong formulas (core/check/mutants.hpp).
struct fa3_mutants {
  bool old_layout = false;      // capacity max_num_seqs + 1 (right for the semaphore-first layout)
  bool no_roundup = false;      // capacity 4 * max batch + 1
  bool split_mismatch = false;  // scheduled with the graph's max_num_splits whatever the run uses
};

// One call's layout: [0, r) prepare_varlen, [r, 2r) dynamic splits (when on), then the heads-in-L2
// vector (head swizzle), r = round_up(batch, 4); the tile semaphore LAST, at nvec * r (SM90).
struct fa3_layout {
  int64_t batch = 0, rounded = 0, nvec = 1;
  bool dynamic_split = false, head_swizzle = false;
  int64_t size() const { return 1 + nvec * rounded; }  // scheduler_needs_semaphore on SM90
};
fa3_layout fa3_layout_of(int64_t batch, int64_t num_splits, bool head_swizzle);

// The split count FA3 picks when told 0: one split when the batch's tiles nearly fill the SMs or
// the keys fit one block, else more. A simplification of num_splits_heuristic (which also weighs
// wave efficiency over the split counts); only "1 or more than 1" matters for the layout.
int64_t fa3_heuristic_splits(int64_t batch, int64_t kv_heads, int64_t max_query_len, int64_t max_seq_len);

// head_swizzle = causal || local; one-token decode without a window is not causal unless
// 64 < head size <= 128 (paged KV, as vLLM always is).
bool fa3_head_swizzle(int64_t max_query_len, int64_t head_size, int64_t window);

// The persistent buffer's entries: 1 + 4 * round_up(max(max_num_seqs, max capture size), 4) (vLLM
// #34043), or a mutant's; 0 when the engine allocates none (no FULL graphs: a fresh tensor per call).
int64_t fa3_metadata_capacity(const engine_settings& s, const fa3_mutants& m);

struct fa3_plan {
  fa3_layout sched;            // what get_scheduler_metadata writes
  int64_t run_size = 0;        // what mha_fwd recomputes from its own num_splits
  int64_t sched_splits = 0, run_splits = 0;  // as passed (0: the heuristic)
  std::vector<int32_t> query_start, seq_lens;  // the step's metadata rows, read per batch entry
  // scheduler_metadata (persistent, or exactly the layout's size), query_start_loc and seq_lens
  // (the model runner's persistent max_num_seqs + 1 / max_num_seqs int32 buffers).
  std::vector<buffer_plan> buffers;
};

fa3_plan plan_fa3(const engine_settings& s, const engine_step& st, int64_t kv_heads, int64_t head_size,
                  int64_t window, const fa3_mutants& m);

// What one scheduling call touches: the layout's entries, and batch + 1 / batch metadata rows.
std::vector<buffer_need> fa3_needs(const fa3_plan& p);

}  // namespace headroom
