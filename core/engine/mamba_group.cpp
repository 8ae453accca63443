// See mamba_group.hpp. Width (vLLM MambaSpec): one block per block_size tokens of max_model_len,
// plus one block per speculative token for the draft states; no alignment to 128.
#include "core/engine/mamba_group.hpp"

#include <algorithm>

#include "core/util/checked.hpp"

namespace headroom {

std::optional<mamba_group> make_mamba_group(const model_geometry& m, const engine_settings& s,
                                            int64_t attention_block_size) {
  mamba_group g;
  for (const layer_geometry& l : m.layers) g.layers += l.mamba_state ? 1 : 0;
  if (g.layers == 0) return std::nullopt;
  g.block_size = s.mamba_block_size > 0 ? s.mamba_block_size : attention_block_size;
  g.cache_block_size = std::min(g.block_size, attention_block_size);  // a model has attention
  if (s.extra_group_block_size > 0)
    g.cache_block_size = std::min(g.cache_block_size, s.extra_group_block_size);
  g.table_width = ceil_div(s.max_model_len, g.block_size) + s.num_speculative_tokens;
  return g;
}

int64_t state_column(int64_t num_computed_tokens, int64_t block_size) {
  return (num_computed_tokens - 1) / block_size;
}

}  // namespace headroom
