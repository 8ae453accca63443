// The Mamba group of a hybrid model (vLLM v1, docs/catalogue.md C11): layers without attention
// that keep a recurrent state (mamba, linear attention) form a KV-cache group of their own beside
// the attention groups, with its own block size. After the KV cache is set up, vLLM lowers
// cache_config.block_size to the smallest block size over all groups, so a drafter's or a ring
// buffer's small group makes it smaller than the Mamba group's. A request resumed at n computed
// tokens has its state seeded from column (n - 1) // block_size of the Mamba block table.
#pragma once

#include <cstdint>
#include <optional>

#include "core/engine/settings.hpp"
#include "core/model/geometry.hpp"

namespace headroom {

struct mamba_group {
  int64_t block_size = 0;        // the group's own: mamba_block_size, else the attention blocks'
  int64_t cache_block_size = 0;  // cache_config.block_size after KV-cache set-up: min over groups
  int64_t table_width = 0;       // columns: cdiv(max_model_len, block_size) + speculative blocks
  int64_t layers = 0;            // Mamba state layers
};

// The model's Mamba group, or nothing when no layer keeps a Mamba state. `attention_block_size`
// is the attention groups' block size (a case's block_size).
std::optional<mamba_group> make_mamba_group(const model_geometry& m, const engine_settings& s,
                                            int64_t attention_block_size);

// The block-table column a resume at n >= 1 computed tokens seeds the state from.
int64_t state_column(int64_t num_computed_tokens, int64_t block_size);

}  // namespace headroom
