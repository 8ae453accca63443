// Reading a Hugging Face config.json (docs/engines.md §2), internal to core/model: where the text config
// lives, typed reads that treat null as absent and name the field as the file spells it, the
// model-wide values every format starts from, and one builder per config format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/geometry.hpp"

namespace headroom::hf {

using nlohmann::json;

// One config being read: the text config (`text_config` when nested, else the root) and the
// prefix that makes every message name the field as the file spells it.
struct source {
  const json& root;
  const json& cfg;
  std::string prefix;  // "text_config." or ""
  std::string file;
  std::string path(const std::string& key) const { return prefix + key; }
};

// Field access. find() returns nullptr for an absent or null field.
const json* find(const json& obj, const std::string& key);
int64_t as_count(const json& v, const std::string& file, const std::string& path, int64_t lo, int64_t hi);
int64_t get_count(const source& s, const std::string& key, int64_t lo, int64_t hi);
std::optional<int64_t> opt_count(const source& s, const std::string& key, int64_t lo, int64_t hi);
bool opt_bool(const json& obj, const std::string& key, bool fallback, const std::string& file,
              const std::string& path);
const json& object_at(const json& obj, const std::string& key, const std::string& file,
                      const std::string& path);
// A per-layer list: an array of exactly n entries (n = num_hidden_layers).
const json& layer_list(const source& s, const std::string& key, int64_t n);
std::string index_path(const std::string& path, std::size_t i);

// Model-wide values (docs/engines.md §2): heads, kv heads (first present alias), head size, hidden
// size, layers, dtype.
struct base {
  std::string name;
  int64_t num_layers = 0;
  int64_t heads = 0;
  std::string heads_field;
  int64_t kv = 0;
  std::string kv_field;
  int64_t head_size = 0;
  int64_t hidden_size = 0;  // 0: the config has none
  dtype kv_dtype = dtype::bf16;
};
base read_base(const source& s);

// Layer kinds from `layer_types`; without it, every layer is sliding when the config has a
// positive `sliding_window` not disabled by `use_sliding_window: false` (vLLM's model-wide
// window, e.g. Mistral), except every `sliding_window_pattern`-th layer when that is given
// (Gemma 3); with no window every layer is full attention.
std::vector<attn_kind> layer_kinds(const source& s, int64_t n);
// The window of the sliding layers: required (positive) when any layer is sliding, else 0.
int64_t sliding_window(const source& s, const std::vector<attn_kind>& kinds, const std::string& key);

// Per layer, whether `layer_types` names a state kind (mamba, linear_attention, ...); all false
// without layer_types.
std::vector<bool> state_layers(const source& s, int64_t n);

// Building the geometry: model-wide values first, then one layer at a time with the field paths
// its head counts came from.
std::string layer_name(int64_t i);
model_geometry start_geometry(const source& s, const base& b);
void add_attention(model_geometry& m, layer_geometry l, std::string heads_field, std::string kv_field);
void add_no_attention(model_geometry& m, int64_t i, bool mamba_state = false);

// One layer's entry of transformers' `per_layer_config` (per_layer_config.cpp): the fields it
// overrides, each with the path it was read from. A window of 0 is an override to no window.
struct layer_override {
  std::optional<int64_t> heads, kv, head_dim, window;
  std::optional<std::string> type;  // the entry's own layer_types[i]
  std::string heads_field, kv_field, head_dim_field, window_field, type_field;
  bool skip_attention = false;  // `skip` lists "attention"
};
// One entry per layer (n = num_hidden_layers), or none when the config has no per_layer_config.
std::vector<layer_override> read_per_layer_config(const source& s, int64_t n);

// A layer as the config's global fields make it, before its override.
struct layer_start {
  attn_kind kind = attn_kind::full;
  bool mamba_state = false;
  bool window_decides = false;  // no layer_types: an overridden window makes it sliding or full
  int64_t heads = 0, kv = 0, head_size = 0;
  std::string heads_field, kv_field;
};
// Adds layer i: the start, then the override. A sliding layer's window is the override's, else
// the config's `sliding_window`, and must be positive.
void add_layer(model_geometry& m, const source& s, int64_t i, const layer_start& start,
               const layer_override& o);

// One builder per format, chosen by parse_hf from the fields that only that format has.
model_geometry build_generic(const source& s, const base& b);
model_geometry build_step3p5(const source& s, const base& b);
model_geometry build_mimo_v2(const source& s, const base& b);
model_geometry build_gemma4(const source& s, const base& b);
model_geometry build_nemotron_nas(const source& s, base b);
model_geometry parse_hf(const json& root, const std::string& file);

}  // namespace headroom::hf
