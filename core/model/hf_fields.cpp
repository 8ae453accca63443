// Typed reads of Hugging Face config fields and the per-layer building blocks shared by every
// config format. Sizes are range-checked as they are read, before anything is allocated.
#include <utility>

#include "core/model/hf_config.hpp"
#include "core/util/error.hpp"
#include "core/util/json_read.hpp"

namespace headroom::hf {

namespace jr = json_read;

const json* find(const json& obj, const std::string& key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

int64_t as_count(const json& v, const std::string& file, const std::string& path, int64_t lo, int64_t hi) {
  return jr::as_int(v, file, path, lo, hi);
}

int64_t get_count(const source& s, const std::string& key, int64_t lo, int64_t hi) {
  const json* v = find(s.cfg, key);
  if (!v) throw input_error(s.file, s.path(key), "(missing)", "required field");
  return as_count(*v, s.file, s.path(key), lo, hi);
}

std::optional<int64_t> opt_count(const source& s, const std::string& key, int64_t lo, int64_t hi) {
  const json* v = find(s.cfg, key);
  if (!v) return std::nullopt;
  return as_count(*v, s.file, s.path(key), lo, hi);
}

bool opt_bool(const json& obj, const std::string& key, bool fallback, const std::string& file,
              const std::string& path) {
  const json* v = find(obj, key);
  if (!v) return fallback;
  if (!v->is_boolean()) throw input_error(file, path, jr::shown(*v), "expected true or false");
  return v->get<bool>();
}

const json& object_at(const json& obj, const std::string& key, const std::string& file,
                      const std::string& path) {
  const json* v = find(obj, key);
  if (!v) throw input_error(file, path, "(missing)", "required field");
  if (!v->is_object()) throw input_error(file, path, jr::shown(*v), "expected an object");
  return *v;
}

std::string index_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

const json& layer_list(const source& s, const std::string& key, int64_t n) {
  const json* v = find(s.cfg, key);
  if (!v) throw input_error(s.file, s.path(key), "(missing)", "required field");
  if (!v->is_array()) throw input_error(s.file, s.path(key), jr::shown(*v), "expected a list");
  const auto len = static_cast<int64_t>(v->size());
  if (len != n)
    throw input_error(
        s.file, s.path(key), "a list of " + std::to_string(len),
        "has " + std::to_string(len) + " entries but num_hidden_layers is " + std::to_string(n));
  return *v;
}

std::vector<attn_kind> layer_kinds(const source& s, int64_t n) {
  if (find(s.cfg, "layer_types")) {
    const json& types = layer_list(s, "layer_types", n);
    std::vector<attn_kind> kinds;
    kinds.reserve(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < types.size(); ++i) {
      const std::string path = index_path(s.path("layer_types"), i);
      if (!types[i].is_string())
        throw input_error(s.file, path, jr::shown(types[i]), "expected a layer type string");
      kinds.push_back(parse_attn_kind(types[i].get<std::string>(), s.file, path));
    }
    return kinds;
  }
  const bool enabled = opt_bool(s.cfg, "use_sliding_window", true, s.file, s.path("use_sliding_window"));
  const auto window = opt_count(s, "sliding_window", 0, max_sliding_window);
  const bool sliding = enabled && window && *window > 0;
  std::vector<attn_kind> kinds(static_cast<std::size_t>(n), sliding ? attn_kind::sliding : attn_kind::full);
  // Gemma 3 style: every pattern-th layer (1-based) is full attention, the others sliding.
  const auto pattern = opt_count(s, "sliding_window_pattern", 1, max_layers);
  if (sliding && pattern)
    for (int64_t i = 0; i < n; ++i)
      if ((i + 1) % *pattern == 0) kinds[static_cast<std::size_t>(i)] = attn_kind::full;
  return kinds;
}

std::vector<bool> state_layers(const source& s, int64_t n) {
  std::vector<bool> state(static_cast<std::size_t>(n), false);
  if (!find(s.cfg, "layer_types")) return state;
  const json& types = layer_list(s, "layer_types", n);
  for (std::size_t i = 0; i < types.size(); ++i)
    state[i] = types[i].is_string() && is_state_kind(types[i].get<std::string>());
  return state;
}

int64_t sliding_window(const source& s, const std::vector<attn_kind>& kinds, const std::string& key) {
  std::size_t first = 0;
  while (first < kinds.size() && kinds[first] != attn_kind::sliding) ++first;
  if (first == kinds.size()) return 0;
  const json* v = find(s.cfg, key);
  const int64_t w = v ? as_count(*v, s.file, s.path(key), 0, max_sliding_window) : 0;
  if (w < 1)
    throw input_error(
        s.file, s.path(key), v ? jr::shown(*v) : "(missing)",
        "layer " + std::to_string(first) + " uses sliding-window attention, which needs a positive window");
  return w;
}

std::string layer_name(int64_t i) { return "model.layers." + std::to_string(i) + ".self_attn.attn"; }

model_geometry start_geometry(const source& s, const base& b) {
  model_geometry m;
  m.source = s.file;
  m.name = b.name;
  m.num_attention_heads = b.heads;
  m.num_kv_heads = b.kv;
  m.head_size = b.head_size;
  m.hidden_size = b.hidden_size;
  m.kv_dtype = b.kv_dtype;
  m.origin.num_attention_heads = b.heads_field;
  m.origin.num_kv_heads = b.kv_field;
  m.layers.reserve(static_cast<std::size_t>(b.num_layers));  // bounded by max_layers
  return m;
}

void add_attention(model_geometry& m, layer_geometry l, std::string heads_field, std::string kv_field) {
  m.layers.push_back(std::move(l));
  m.origin.layer_heads.push_back(std::move(heads_field));
  m.origin.layer_kv_heads.push_back(std::move(kv_field));
}

// A layer without attention (mamba, linear attention, no-op): named by its block, no geometry.
void add_no_attention(model_geometry& m, int64_t i, bool mamba_state) {
  layer_geometry l;
  l.name = "model.layers." + std::to_string(i);
  l.kind = attn_kind::none;
  l.mamba_state = mamba_state;
  add_attention(m, std::move(l), "", "");
}

}  // namespace headroom::hf
