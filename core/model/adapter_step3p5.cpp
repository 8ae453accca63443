// Step-3.5 adapter (vLLM models/step3p5.py). Layers whose `layer_types` entry equals
// `attention_other_setting.attention_type` take that setting's num_attention_heads,
// num_attention_groups (kv heads) and head_dim; the others take the model-wide values.
// A layer is sliding when its type is sliding_attention (every even layer when `layer_types` is
// absent) and the config has a `sliding_window`; otherwise it is full attention.
#include "core/model/hf_config.hpp"
#include "core/util/error.hpp"
#include "core/util/json_read.hpp"

namespace headroom::hf {

namespace {

// The alternative attention setting, read once with its field paths.
struct other_setting {
  std::string type;
  int64_t heads = 0, kv = 0, head_size = 0;
  std::string heads_field, kv_field;
};

other_setting read_other(const source& s) {
  const std::string base_path = s.path("attention_other_setting");
  const json& o = object_at(s.cfg, "attention_other_setting", s.file, base_path);
  other_setting r;
  r.type = "sliding_attention";
  if (const json* t = find(o, "attention_type")) {
    if (!t->is_string())
      throw input_error(s.file, base_path + ".attention_type", json_read::shown(*t),
                        "expected a layer type string");
    r.type = t->get<std::string>();
  }
  auto count = [&](const char* key, int64_t hi) {
    const json* v = find(o, key);
    const std::string path = base_path + "." + key;
    if (!v) throw input_error(s.file, path, "(missing)", "required field");
    return as_count(*v, s.file, path, 1, hi);
  };
  r.heads = count("num_attention_heads", max_heads);
  r.kv = count("num_attention_groups", max_heads);
  r.head_size = count("head_dim", max_head_size);
  r.heads_field = base_path + ".num_attention_heads";
  r.kv_field = base_path + ".num_attention_groups";
  return r;
}

// Layer types as strings (for the match against attention_type) plus their kinds.
std::vector<std::string> type_names(const source& s, int64_t n) {
  std::vector<std::string> names;
  if (!find(s.cfg, "layer_types")) return names;
  const json& types = layer_list(s, "layer_types", n);
  for (const json& t : types) names.push_back(t.is_string() ? t.get<std::string>() : "");
  return names;
}

}  // namespace

model_geometry build_step3p5(const source& s, const base& b) {
  const int64_t n = b.num_layers;
  const other_setting other = read_other(s);
  const std::vector<std::string> names = type_names(s, n);
  std::vector<attn_kind> kinds;
  if (names.empty()) {
    for (int64_t i = 0; i < n; ++i) kinds.push_back(i % 2 == 0 ? attn_kind::sliding : attn_kind::full);
  } else {
    kinds = layer_kinds(s, n);
  }
  const auto window = opt_count(s, "sliding_window", 0, max_sliding_window).value_or(0);
  model_geometry m = start_geometry(s, b);
  for (int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (kinds[k] == attn_kind::none) {
      add_no_attention(m, i);
      continue;
    }
    const bool sliding = kinds[k] == attn_kind::sliding && window > 0;
    const bool uses_other = !names.empty() && names[k] == other.type;
    layer_geometry l{layer_name(i),
                     sliding ? attn_kind::sliding : attn_kind::full,
                     uses_other ? other.heads : b.heads,
                     uses_other ? other.kv : b.kv,
                     uses_other ? other.head_size : b.head_size,
                     uses_other ? other.head_size : b.head_size,
                     sliding ? window : 0};
    add_attention(m, std::move(l), uses_other ? other.heads_field : b.heads_field,
                  uses_other ? other.kv_field : b.kv_field);
  }
  return m;
}

}  // namespace headroom::hf
