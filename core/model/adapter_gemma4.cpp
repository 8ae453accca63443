// Gemma 4 adapter (vLLM models/gemma4.py, transformers Gemma4TextConfig), usually nested under
// `text_config`. Every layer has num_attention_heads query heads; sliding layers use head_dim,
// num_key_value_heads and `sliding_window`. Full-attention layers differ in one of two forms:
// - per_layer_config (transformers >= 5.15 saves this form): the entries override the layers'
//   fields (per_layer_config.cpp), and the flat keys below are then ignored, as transformers does;
// - the flat keys: every full layer takes `global_head_dim` (512 when absent, transformers'
//   default) and, only when `attention_k_eq_v` is true, `num_global_key_value_heads`.
// Without `layer_types` the transformers default applies (every sixth layer full attention); the
// last layer is always full attention.
#include "core/model/hf_config.hpp"
#include "core/util/error.hpp"

namespace headroom::hf {

namespace {

constexpr int64_t default_global_head_dim = 512;

std::vector<attn_kind> gemma4_kinds(const source& s, int64_t n) {
  std::vector<attn_kind> kinds;
  if (find(s.cfg, "layer_types")) {
    kinds = layer_kinds(s, n);
  } else {
    kinds.reserve(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) kinds.push_back((i + 1) % 6 == 0 ? attn_kind::full : attn_kind::sliding);
  }
  kinds.back() = attn_kind::full;  // transformers forces the last layer to full attention
  return kinds;
}

// The flat keys as the overrides transformers builds from them for every full layer.
std::vector<layer_override> flat_overrides(const source& s, const std::vector<attn_kind>& kinds) {
  layer_override full;
  full.head_dim = opt_count(s, "global_head_dim", 1, max_head_size).value_or(default_global_head_dim);
  full.head_dim_field = s.path("global_head_dim");
  const bool k_eq_v = opt_bool(s.cfg, "attention_k_eq_v", false, s.file, s.path("attention_k_eq_v"));
  if (const auto g = opt_count(s, "num_global_key_value_heads", 1, max_heads); g && k_eq_v) {
    full.kv = *g;
    full.kv_field = s.path("num_global_key_value_heads");
  }
  std::vector<layer_override> over(kinds.size());
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i] == attn_kind::full) over[i] = full;
  return over;
}

}  // namespace

model_geometry build_gemma4(const source& s, const base& b) {
  const int64_t n = b.num_layers;
  const std::vector<attn_kind> kinds = gemma4_kinds(s, n);
  std::vector<layer_override> over =
      find(s.cfg, "per_layer_config") ? read_per_layer_config(s, n) : flat_overrides(s, kinds);
  over.resize(static_cast<std::size_t>(n));
  model_geometry m = start_geometry(s, b);
  for (int64_t i = 0; i < n; ++i) {
    const layer_start start{kinds[static_cast<std::size_t>(i)],
                            false,
                            false,
                            b.heads,
                            b.kv,
                            b.head_size,
                            b.heads_field,
                            b.kv_field};
    add_layer(m, s, i, start, over[static_cast<std::size_t>(i)]);
  }
  return m;
}

}  // namespace headroom::hf
