// MiMo-V2 adapter (vLLM models/mimo_v2.py). `hybrid_layer_pattern[i]` is 1 for a sliding-window
// layer and 0 for a full-attention layer. Sliding layers take swa_num_attention_heads,
// swa_num_key_value_heads, swa_head_dim, swa_v_head_dim (default swa_head_dim) and the window
// `sliding_window_size` (or `sliding_window`); full layers take num_attention_heads,
// num_key_value_heads, head_dim and v_head_dim (default head_dim).
#include "core/model/hf_config.hpp"
#include "core/util/error.hpp"

namespace headroom::hf {

namespace {

// One attention variant: heads, kv heads, head sizes and the fields they came from.
struct variant {
  int64_t heads = 0, kv = 0, head_size = 0, head_size_v = 0;
  std::string heads_field, kv_field;
};

variant read_swa(const source& s) {
  variant v;
  v.heads = get_count(s, "swa_num_attention_heads", 1, max_heads);
  v.kv = get_count(s, "swa_num_key_value_heads", 1, max_heads);
  v.head_size = get_count(s, "swa_head_dim", 1, max_head_size);
  v.head_size_v = opt_count(s, "swa_v_head_dim", 1, max_head_size).value_or(v.head_size);
  v.heads_field = s.path("swa_num_attention_heads");
  v.kv_field = s.path("swa_num_key_value_heads");
  return v;
}

variant read_full(const source& s, const base& b) {
  variant v{b.heads, b.kv, b.head_size, b.head_size, b.heads_field, b.kv_field};
  v.head_size_v = opt_count(s, "v_head_dim", 1, max_head_size).value_or(b.head_size);
  return v;
}

}  // namespace

model_geometry build_mimo_v2(const source& s, const base& b) {
  const int64_t n = b.num_layers;
  const std::string pattern_key = "hybrid_layer_pattern";
  const json& pattern = layer_list(s, pattern_key, n);
  std::vector<attn_kind> kinds;
  kinds.reserve(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const int64_t p = as_count(pattern[i], s.file, index_path(s.path(pattern_key), i), 0, 1);
    kinds.push_back(p == 1 ? attn_kind::sliding : attn_kind::full);
  }
  const std::string window_key =
      find(s.cfg, "sliding_window_size") ? "sliding_window_size" : "sliding_window";
  const int64_t window = sliding_window(s, kinds, window_key);
  const bool any_sliding = window > 0;
  const variant full = read_full(s, b);
  const variant swa = any_sliding ? read_swa(s) : variant{};
  model_geometry m = start_geometry(s, b);
  for (int64_t i = 0; i < n; ++i) {
    const bool sliding = kinds[static_cast<std::size_t>(i)] == attn_kind::sliding;
    const variant& v = sliding ? swa : full;
    layer_geometry l{layer_name(i),
                     sliding ? attn_kind::sliding : attn_kind::full,
                     v.heads,
                     v.kv,
                     v.head_size,
                     v.head_size_v,
                     sliding ? window : 0};
    add_attention(m, std::move(l), v.heads_field, v.kv_field);
  }
  return m;
}

}  // namespace headroom::hf
