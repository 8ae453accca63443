// Config loading: file and JSON errors, the choice between the explicit form and a Hugging Face
// config, and the explicit form in both directions (lossless: a generated case is a file).
#include "core/model/loader.hpp"

#include <nlohmann/json.hpp>

#include "core/model/hf_config.hpp"
#include "core/util/error.hpp"
#include "core/util/json_file.hpp"
#include "core/util/json_read.hpp"

namespace headroom {

namespace jr = json_read;
using nlohmann::json;

namespace {

int64_t count(const json& obj, const std::string& key, const std::string& file, const std::string& path,
              int64_t lo, int64_t hi) {
  return jr::get_int(obj, key, file, path, lo, hi);
}

layer_geometry explicit_layer(const json& j, std::size_t i, const std::string& file) {
  const std::string path = "layers[" + std::to_string(i) + "].";
  if (!j.is_object())
    throw input_error(file, "layers[" + std::to_string(i) + "]", jr::shown(j), "expected a layer object");
  layer_geometry l;
  l.name = jr::get_string(j, "name", file, path);
  const std::string type = jr::get_string(j, "type", file, path);
  l.kind = parse_attn_kind(type, file, path + "type");
  l.mamba_state = is_state_kind(type);
  // Ranges here only keep the numbers sane; validate() enforces positivity per layer kind.
  l.num_heads = count(j, "num_heads", file, path, 0, max_heads);
  l.num_kv_heads = count(j, "num_kv_heads", file, path, 0, max_heads);
  l.head_size = count(j, "head_size", file, path, 0, max_head_size);
  l.head_size_v =
      j.contains("head_size_v") ? count(j, "head_size_v", file, path, 0, max_head_size) : l.head_size;
  l.sliding_window = jr::get_int_or(j, "sliding_window", 0, file, path, 0, max_sliding_window);
  l.compress_ratio = jr::get_int_or(j, "compress_ratio", 0, file, path, 0, max_compress_ratio);
  return l;
}

model_geometry parse_explicit(const json& j, const std::string& file) {
  model_geometry m;
  m.source = file;
  if (j.contains("name")) {
    m.name = jr::get_string(j, "name", file, "");
  } else {
    m.name = std::filesystem::path(file).stem().string();
  }
  m.num_attention_heads = count(j, "num_attention_heads", file, "", 1, max_heads);
  m.num_kv_heads = count(j, "num_key_value_heads", file, "", 1, max_heads);
  m.head_size = count(j, "head_dim", file, "", 1, max_head_size);
  m.hidden_size = jr::get_int_or(j, "hidden_size", 0, file, "", 0, max_hidden_size);
  if (j.contains("dtype")) m.kv_dtype = parse_dtype(jr::get_string(j, "dtype", file, ""), file, "dtype");
  if (j.contains("kv_cache_dtype")) {  // an fp8 cache (vLLM's spellings); written by to_json
    const std::string v = jr::get_string(j, "kv_cache_dtype", file, "");
    const auto q = v == "auto" ? std::optional<kv_quant>(kv_quant::none) : parse_kv_quant(v);
    if (!q)
      throw input_error(file, "kv_cache_dtype", "\"" + v + "\"",
                        "unsupported cache dtype (expected auto, fp8, fp8_e4m3 or fp8_e5m2)");
    m.kv_cache = *q;
  }
  const json& layers = j.at("layers");
  if (layers.empty() || layers.size() > static_cast<std::size_t>(max_layers))
    throw input_error(file, "layers", "a list of " + std::to_string(layers.size()),
                      "a model has 1.." + std::to_string(max_layers) + " layers");
  m.layers.reserve(layers.size());
  for (std::size_t i = 0; i < layers.size(); ++i) m.layers.push_back(explicit_layer(layers[i], i, file));
  return m;
}

}  // namespace

model_geometry load_model(const std::string& path) {
  return read_json_input(path, [&](const json& j) { return parse_model(j, path); });
}

model_geometry parse_model(const json& j, const std::string& source) {
  if (!j.is_object()) throw input_error(source, "<root>", jr::shown(j), "a model config is a JSON object");
  const auto layers = j.find("layers");
  model_geometry m =
      layers != j.end() && layers->is_array() ? parse_explicit(j, source) : hf::parse_hf(j, source);
  validate(m);
  return m;
}

json to_json(const model_geometry& m) {
  json layers = json::array();
  for (const layer_geometry& l : m.layers) {
    json j = {{"name", l.name},
              {"type", l.mamba_state ? "mamba" : to_string(l.kind)},
              {"num_heads", l.num_heads},
              {"num_kv_heads", l.num_kv_heads},
              {"head_size", l.head_size},
              {"head_size_v", l.head_size_v},
              {"sliding_window", l.sliding_window}};
    if (l.compress_ratio > 0) j["compress_ratio"] = l.compress_ratio;  // written only when set
    layers.push_back(std::move(j));
  }
  json out = {{"name", m.name},
              {"num_attention_heads", m.num_attention_heads},
              {"num_key_value_heads", m.num_kv_heads},
              {"head_dim", m.head_size},
              {"dtype", to_string(m.kv_dtype)},
              {"layers", std::move(layers)}};
  if (m.hidden_size > 0) out["hidden_size"] = m.hidden_size;  // optional: 0 is unknown
  if (m.kv_cache != kv_quant::none) out["kv_cache_dtype"] = to_string(m.kv_cache);
  return out;
}

}  // namespace headroom
