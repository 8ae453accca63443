// Gemma 4 adapter (vLLM models/gemma4.py, transformers Gemma4TextConfig), usually nested under
// `text_config`. Every layer has num_attention_heads query heads. Full-attention layers use
// `global_head_dim` (default head_dim) and, when `attention_k_eq_v` is true,
// `num_global_key_value_heads` (default num_key_value_heads); sliding layers use head_dim,
// num_key_value_heads and `sliding_window`. Without `layer_types` the transformers default
// applies: every sixth layer full attention, the last layer always full.
#include "core/model/hf_config.hpp"
#include "core/util/error.hpp"

namespace headroom::hf {

namespace {

std::vector<attn_kind> gemma4_kinds(const source& s, int64_t n) {
  if (find(s.cfg, "layer_types")) return layer_kinds(s, n);
  std::vector<attn_kind> kinds;
  kinds.reserve(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    kinds.push_back((i + 1) % 6 == 0 || i == n - 1 ? attn_kind::full : attn_kind::sliding);
  return kinds;
}

}  // namespace

model_geometry build_gemma4(const source& s, const base& b) {
  const int64_t n = b.num_layers;
  const std::vector<attn_kind> kinds = gemma4_kinds(s, n);
  const int64_t window = sliding_window(s, kinds, "sliding_window");
  const int64_t global_head =
      opt_count(s, "global_head_dim", 1, max_head_size).value_or(b.head_size);
  const bool k_eq_v = opt_bool(s.cfg, "attention_k_eq_v", false, s.file,
                               s.path("attention_k_eq_v"));
  int64_t global_kv = b.kv;
  std::string global_kv_field = b.kv_field;
  if (const auto g = opt_count(s, "num_global_key_value_heads", 1, max_heads); g && k_eq_v) {
    global_kv = *g;
    global_kv_field = s.path("num_global_key_value_heads");
  }
  model_geometry m = start_geometry(s, b);
  for (int64_t i = 0; i < n; ++i) {
    const attn_kind kind = kinds[static_cast<std::size_t>(i)];
    if (kind == attn_kind::none) {
      add_no_attention(m, i);
      continue;
    }
    const bool full = kind == attn_kind::full;
    const int64_t head = full ? global_head : b.head_size;
    layer_geometry l{layer_name(i), kind, b.heads, full ? global_kv : b.kv, head, head,
                     full ? 0 : window};
    add_attention(m, std::move(l), b.heads_field, full ? global_kv_field : b.kv_field);
  }
  return m;
}

}  // namespace headroom::hf
