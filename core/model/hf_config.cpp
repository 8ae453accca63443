// Hugging Face config.json, the common case (docs/engines.md §2): model-wide heads, kv-head aliases, the
// head_dim fallback, dtype and name; per-layer heads from `num_attention_heads_per_layer` and
// kinds from `layer_types` (Laguna). parse_hf picks the format by its distinctive fields.
#include <filesystem>

#include "core/model/hf_config.hpp"
#include "core/util/error.hpp"
#include "core/util/json_read.hpp"

namespace headroom::hf {

namespace jr = json_read;

namespace {

std::string model_name(const source& s) {
  if (const json* a = find(s.root, "architectures"); a && a->is_array() && !a->empty() && (*a)[0].is_string())
    return (*a)[0].get<std::string>();
  for (const json* obj : {&s.cfg, &s.root})
    if (const json* t = find(*obj, "model_type"); t && t->is_string()) return t->get<std::string>();
  std::string stem = std::filesystem::path(s.file).stem().string();
  return stem.empty() ? "model" : stem;
}

// Head size: `head_dim` when positive, else hidden_size // num_attention_heads (vLLM).
int64_t read_head_size(const source& s, int64_t heads, int64_t hidden) {
  if (const auto d = opt_count(s, "head_dim", 0, max_head_size); d && *d > 0) return *d;
  if (hidden == 0)
    throw input_error(s.file, s.path("hidden_size"), "(missing)", "required when head_dim is absent or 0");
  const int64_t d = hidden / heads;
  if (d < 1 || d > max_head_size)
    throw input_error(s.file, s.path("hidden_size"), std::to_string(hidden),
                      "head size hidden_size / num_attention_heads = " + std::to_string(d) +
                          " is outside 1.." + std::to_string(max_head_size));
  return d;
}

// `torch_dtype` or `dtype`, in the text config first, then at the top level; bf16 if absent.
dtype read_dtype(const source& s) {
  for (const json* obj : {&s.cfg, &s.root}) {
    for (const char* key : {"torch_dtype", "dtype"}) {
      const json* v = find(*obj, key);
      if (!v) continue;
      const std::string path = obj == &s.cfg ? s.path(key) : std::string(key);
      if (!v->is_string()) throw input_error(s.file, path, jr::shown(*v), "expected a dtype string");
      return parse_dtype(v->get<std::string>(), s.file, path);
    }
  }
  return dtype::bf16;
}

bool is_gemma4(const source& s) {
  if (find(s.cfg, "global_head_dim") || find(s.cfg, "num_global_key_value_heads")) return true;
  for (const json* obj : {&s.cfg, &s.root})
    if (const json* t = find(*obj, "model_type"); t && t->is_string())
      if (t->get<std::string>().rfind("gemma4", 0) == 0) return true;
  return false;
}

}  // namespace

base read_base(const source& s) {
  base b;
  b.name = model_name(s);
  b.num_layers = get_count(s, "num_hidden_layers", 1, max_layers);
  b.heads = get_count(s, "num_attention_heads", 1, max_heads);
  b.heads_field = s.path("num_attention_heads");
  b.kv = b.heads;  // no kv alias: as many kv heads as query heads
  b.kv_field = b.heads_field;
  for (const char* alias : {"n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num",
                            "num_attention_groups"}) {
    if (!find(s.cfg, alias)) continue;
    b.kv = get_count(s, alias, 1, max_heads);
    b.kv_field = s.path(alias);
    break;
  }
  b.hidden_size = opt_count(s, "hidden_size", 1, max_hidden_size).value_or(0);
  b.head_size = read_head_size(s, b.heads, b.hidden_size);
  b.kv_dtype = read_dtype(s);
  return b;
}

model_geometry build_generic(const source& s, const base& b) {
  const int64_t n = b.num_layers;
  const std::vector<attn_kind> kinds = layer_kinds(s, n);
  const std::vector<bool> state = state_layers(s, n);
  const std::string per_layer_key = "num_attention_heads_per_layer";
  const json* per_layer = find(s.cfg, per_layer_key) ? &layer_list(s, per_layer_key, n) : nullptr;
  std::vector<layer_override> over = read_per_layer_config(s, n);
  over.resize(static_cast<std::size_t>(n));  // layers without an entry keep their global fields
  // Without layer_types (or Gemma 3's pattern), a layer's own window decides whether it slides.
  const bool window_decides =
      !find(s.cfg, "layer_types") && !find(s.cfg, "sliding_window_pattern") &&
      opt_bool(s.cfg, "use_sliding_window", true, s.file, s.path("use_sliding_window"));
  model_geometry m = start_geometry(s, b);
  for (int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    layer_start start{kinds[k], state[k],    window_decides, b.heads,
                      b.kv,     b.head_size, b.heads_field,  b.kv_field};
    if (per_layer && kinds[k] != attn_kind::none) {
      start.heads_field = index_path(s.path(per_layer_key), k);
      start.heads = as_count((*per_layer)[k], s.file, start.heads_field, 1, max_heads);
    }
    add_layer(m, s, i, start, over[k]);
  }
  return m;
}

model_geometry parse_hf(const json& root, const std::string& file) {
  const json* text = find(root, "text_config");
  if (text && !text->is_object())
    throw input_error(file, "text_config", jr::shown(*text), "expected an object");
  const source s{root, text ? *text : root, text ? "text_config." : "", file};
  const base b = read_base(s);
  if (find(s.cfg, "block_configs")) return build_nemotron_nas(s, b);
  if (find(s.cfg, "attention_other_setting")) return build_step3p5(s, b);
  if (find(s.cfg, "hybrid_layer_pattern") || find(s.cfg, "swa_num_attention_heads"))
    return build_mimo_v2(s, b);
  if (is_gemma4(s)) return build_gemma4(s, b);
  return build_generic(s, b);
}

}  // namespace headroom::hf
