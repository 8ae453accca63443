// Per-request FlashInfer metadata (docs/catalogue.md C5): the persistent paged_kv_indptr and
// paged_kv_last_page_len buffers a builder sizes once, and the padded batch each step binds them
// for. Three engines size them three ways (engine_settings::flavour):
//   vllm         max_num_seqs + 1 / max_num_seqs; every path pads to at most max_num_seqs requests
//   sglang       max(graph ceiling, eager ceiling) (+ 1): the graph ceiling is the request pool
//                rounded up to the graph alignment (x2 under two-batch overlap, x attention TP under
//                require_gathered_buffer, x attention CP when that does not divide it; no capture
//                size exceeds it; graph batches round up the same way), eager batches (warm-up, DP
//                dummies) under DP attention or a gathered buffer round up to a multiple of the
//                attention TP size, then of the attention CP size
//   vllm-ascend  max(max_num_seqs, max capture size) + 1 (+ 1) under FULL graphs: a graph batch is
//                its capture size plus one dummy request
#pragma once

#include <cstdint>
#include <vector>

#include "core/backends/buffers.hpp"
#include "core/engine/steps.hpp"

namespace headroom {

// The historical wrong capacities (core/check/mutants.hpp).
struct request_meta_mutants {
  bool from_pool = false;      // SGLang: the request pool's size
  bool graph_ceiling = false;  // SGLang: the CUDA-graph ceiling only
  bool max_num_seqs = false;   // vllm-ascend: max_num_seqs, without the capture size and the dummy
};

// The rows the builder allocates (last_page_len entries; indptr holds one more).
int64_t request_meta_rows(const engine_settings& s, const request_meta_mutants& m);

// SGLang's two ceilings: the largest graph batch (round_up(pool, graph multiple)) and the largest
// eager (warm-up) batch (round_up(round_up(pool, attention TP), attention CP) under DP attention
// or a gathered buffer, else the pool).
int64_t sglang_graph_ceiling(const engine_settings& s);
int64_t sglang_eager_ceiling(const engine_settings& s);

// The padded batches a step binds the buffers for, one per padding path it takes: a scheduled
// step its graph's or its eager one, a dummy run its eager warm-up and (when graphed) its capture.
std::vector<int64_t> request_meta_batches(const engine_settings& s, const engine_step& st);

struct request_meta_plan {
  int64_t padded = 0;                  // the batch: indptr[0..padded], last_page_len[0..padded)
  std::vector<int32_t> indptr;         // host values, padded + 1 (pages; padded rows repeat)
  std::vector<int32_t> last_page_len;  // host values, padded
  std::vector<buffer_plan> buffers;    // paged_kv_indptr, paged_kv_last_page_len (int32)
};

request_meta_plan plan_request_meta(const engine_settings& s, const engine_step& st, int64_t padded,
                                    int64_t page_size, const request_meta_mutants& m);

// What filling the padded batch touches: padded + 1 and padded entries.
std::vector<buffer_need> request_meta_needs(const request_meta_plan& p);

}  // namespace headroom
