// Draws of the catalogue's formula-level classes into generated cases (docs/catalogue.md):
// C9, an MLA head tile (per-rank head counts of the generated geometries often do not divide it)
// and a hidden_size that may disagree with heads x head size; C11, a hybrid model with Mamba state
// layers, its own Mamba block size and a smaller KV-cache group, under a short max_model_len; C10,
// FlashInfer's tensor-core decode with split-KV disabled. The fixed mirror finds nothing in them;
// the C9, C10 and C11 mutants do.
#pragma once

#include <cstdint>
#include <utility>

#include <rapidcheck.h>

#include "core/check/case.hpp"

namespace headroom::generators {

struct class_draw {
  int64_t head_tile = 0;  // engine head_tile (0: no padding kernel)
  // hidden_size = heads * head_size * first / second; 0 (unknown) when first is 0
  std::pair<int64_t, int64_t> hidden_ratio = {0, 1};
  bool hybrid = false;           // Mamba state layers (the no-attention layers, or one appended)
  int64_t mamba_block_size = 0;  // engine settings of the Mamba group and a smaller group
  int64_t extra_group_block_size = 0;
  int64_t max_model_len = 4096;
  // C10: FlashInfer decode on tensor cores (the prefill planner and kernel), split-KV disabled
  // (the case's cuda_graph comes from the options draw).
  bool tensor_core_decode = false;
  bool disable_split_kv = false;
};

rc::Gen<class_draw> class_draws();

// Writes a draw into a case whose model and engine are otherwise complete.
void apply(const class_draw& d, check_case& c);

}  // namespace headroom::generators
