// One launch of FlashInfer's batch prefill over the paged KV cache
// (BatchPrefillWithPagedKVCacheDispatched: the prefill kernel, then VariableLengthMergeStates when
// tmp_v is given), which also serves FlashInfer's tensor-core decode. The page table, q, K, V, the
// output and the plan's scratch are as for decode (decode_args); the prefill adds the query
// offsets, the q-tile list, the merge rows and the tile height the plan picked.
#pragma once

#include "targets/engine/flashinfer/fi_decode_run.hpp"
#include "targets/engine/flashinfer/fi_prefill_tiles.hpp"

namespace headroom::engine::fi {

struct prefill_args : decode_args {
  uint32_t cta_tile_q = 0;      // the plan's rows per q tile: 16, 32, 64 or 128
  uint32_t total_num_rows = 0;  // query rows the merge writes (max_total_num_rows)
  int32_t* q_indptr = nullptr;  // batch_size + 1 query offsets
  int32_t* qo_tile_indices = nullptr;
  int32_t* merge_indptr = nullptr;  // split only
};

// Launches on the default stream, with the causal mask (vLLM's prefill; for decode rows, whose one
// query sees every key, it equals FlashInfer's non-causal tensor-core decode). Returns the
// launch's error text, empty on success.
std::string launch_prefill(const prefill_args& a);

}  // namespace headroom::engine::fi
