// transformers' `per_layer_config` (heterogeneous configs, Gemma 4 since transformers 5.15): an
// object keyed by layer index (an integer written as a string, zero-padded when transformers saves
// it: "05") whose entries override fields of that layer only. headroom reads the attention fields:
// query heads, kv heads (any alias), head_dim, sliding_window (null: no window), the entry's own
// layer_types list and `skip` (a list of sub-layers; "attention" removes the layer's attention).
// Other fields (intermediate sizes, rope, ...) are not attention geometry and are ignored.
#include <charconv>

#include "core/model/hf_config.hpp"
#include "core/util/error.hpp"
#include "core/util/json_read.hpp"

namespace headroom::hf {

namespace jr = json_read;

namespace {

constexpr const char* kv_aliases[] = {"n_head_kv", "num_kv_heads", "num_key_value_heads",
                                      "multi_query_group_num", "num_attention_groups"};

// A key as a layer index in 0..n-1: decimal digits only (zero padding allowed), else input_error.
int64_t layer_index(const std::string& key, int64_t n, const source& s, const std::string& path) {
  int64_t i = -1;
  const char* end = key.data() + key.size();
  const bool digits = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
  if (digits) {
    const auto r = std::from_chars(key.data(), end, i);
    if (r.ec != std::errc() || r.ptr != end) i = -1;
  }
  if (i < 0 || i >= n)
    throw input_error(s.file, path, "\"" + key + "\"",
                      "keys are layer indices 0.." + std::to_string(n - 1) + " (num_hidden_layers is " +
                          std::to_string(n) + ")");
  return i;
}

// A count of an entry: present and not null (an override to None is no geometry).
std::optional<int64_t> entry_count(const json& e, const std::string& key, const source& s,
                                   const std::string& path, int64_t lo, int64_t hi) {
  const auto it = e.find(key);
  if (it == e.end()) return std::nullopt;
  return as_count(*it, s.file, path + "." + key, lo, hi);
}

bool skips_attention(const json& skip, const source& s, const std::string& path) {
  if (!skip.is_array())
    throw input_error(s.file, path, jr::shown(skip), "expected a list of sub-layer names");
  bool attention = false;
  for (std::size_t k = 0; k < skip.size(); ++k) {
    if (!skip[k].is_string())
      throw input_error(s.file, index_path(path, k), jr::shown(skip[k]), "expected a sub-layer name");
    attention = attention || skip[k].get<std::string>() == "attention";
  }
  return attention;
}

layer_override read_entry(const json& e, int64_t i, int64_t n, const source& s, const std::string& path) {
  if (!e.is_object()) throw input_error(s.file, path, jr::shown(e), "expected an object of field overrides");
  layer_override o;
  if ((o.heads = entry_count(e, "num_attention_heads", s, path, 1, max_heads)))
    o.heads_field = path + ".num_attention_heads";
  for (const char* alias : kv_aliases)
    if ((o.kv = entry_count(e, alias, s, path, 1, max_heads))) {
      o.kv_field = path + "." + alias;
      break;
    }
  if ((o.head_dim = entry_count(e, "head_dim", s, path, 1, max_head_size)))
    o.head_dim_field = path + ".head_dim";
  if (const auto w = e.find("sliding_window"); w != e.end()) {
    o.window_field = path + ".sliding_window";
    o.window = w->is_null() ? 0 : as_count(*w, s.file, o.window_field, 0, max_sliding_window);
  }
  if (const auto t = e.find("layer_types"); t != e.end()) {
    const std::string tp = path + ".layer_types";
    if (!t->is_array() || static_cast<int64_t>(t->size()) != n)
      throw input_error(s.file, tp, jr::shown(*t),
                        "expected a list of num_hidden_layers (" + std::to_string(n) + ") layer types");
    const json& v = (*t)[static_cast<std::size_t>(i)];
    o.type_field = index_path(tp, static_cast<std::size_t>(i));
    if (!v.is_string()) throw input_error(s.file, o.type_field, jr::shown(v), "expected a layer type string");
    o.type = v.get<std::string>();
  }
  if (const auto k = e.find("skip"); k != e.end()) o.skip_attention = skips_attention(*k, s, path + ".skip");
  return o;
}

}  // namespace

std::vector<layer_override> read_per_layer_config(const source& s, int64_t n) {
  const json* plc = find(s.cfg, "per_layer_config");
  if (!plc) return {};
  const std::string path = s.path("per_layer_config");
  if (!plc->is_object())
    throw input_error(s.file, path, jr::shown(*plc), "expected an object keyed by layer index");
  std::vector<layer_override> out(static_cast<std::size_t>(n));  // n <= max_layers
  std::vector<std::string> key_of(static_cast<std::size_t>(n));
  for (const auto& [key, entry] : plc->items()) {
    const int64_t i = layer_index(key, n, s, path);
    auto& seen = key_of[static_cast<std::size_t>(i)];
    if (!seen.empty())
      throw input_error(s.file, path, "\"" + key + "\"",
                        "names layer " + std::to_string(i) + " again (as \"" + seen + "\")");
    seen = key;
    out[static_cast<std::size_t>(i)] = read_entry(entry, i, n, s, path + "." + key);
  }
  return out;
}

void add_layer(model_geometry& m, const source& s, int64_t i, const layer_start& start,
               const layer_override& o) {
  attn_kind kind = start.kind;
  bool state = start.mamba_state;
  if (o.type) {
    kind = parse_attn_kind(*o.type, s.file, o.type_field);
    state = is_state_kind(*o.type);
  } else if (o.window && start.window_decides && kind != attn_kind::none) {
    kind = *o.window > 0 ? attn_kind::sliding : attn_kind::full;
  }
  if (o.skip_attention) kind = attn_kind::none;
  if (kind == attn_kind::none) return add_no_attention(m, i, state);
  layer_geometry l{layer_name(i),
                   kind,
                   o.heads.value_or(start.heads),
                   o.kv.value_or(start.kv),
                   o.head_dim.value_or(start.head_size),
                   o.head_dim.value_or(start.head_size),
                   0};
  if (kind == attn_kind::sliding) {
    const std::string field = o.window ? o.window_field : s.path("sliding_window");
    const json* global = o.window ? nullptr : find(s.cfg, "sliding_window");
    l.sliding_window = o.window ? *o.window
                       : global ? as_count(*global, s.file, field, 0, max_sliding_window)
                                : 0;
    if (l.sliding_window < 1)
      throw input_error(
          s.file, field,
          o.window ? std::to_string(*o.window)
          : global ? jr::shown(*global)
                   : "(missing)",
          "layer " + std::to_string(i) + " uses sliding-window attention, which needs a positive window");
  }
  add_attention(m, std::move(l), o.heads ? o.heads_field : start.heads_field,
                o.kv ? o.kv_field : start.kv_field);
}

}  // namespace headroom::hf
