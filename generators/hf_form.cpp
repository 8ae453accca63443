// See hf_form.hpp.
#include "generators/hf_form.hpp"

#include <stdexcept>

#include "core/util/error.hpp"

#include "core/model/loader.hpp"
#include "generators/geometry_gen.hpp"

namespace headroom::generators {

nlohmann::json to_hf_config(const model_geometry& m) {
  using nlohmann::json;
  json types = json::array(), per_layer = json::object();
  int64_t window = 0;
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const layer_geometry& l = m.layers[i];
    types.push_back(l.kind == attn_kind::none ? "mamba" : to_string(l.kind));
    if (l.kind == attn_kind::none) continue;
    json e = {{"num_attention_heads", l.num_heads},
              {"num_key_value_heads", l.num_kv_heads},
              {"head_dim", l.head_size}};
    if (l.kind == attn_kind::sliding) e["sliding_window"] = l.sliding_window, window = l.sliding_window;
    per_layer[std::to_string(i)] = e;
  }
  json hf = {{"architectures", {m.name}},
             {"num_hidden_layers", m.layers.size()},
             {"num_attention_heads", m.num_attention_heads},
             {"num_key_value_heads", m.num_kv_heads},
             {"head_dim", m.head_size},
             {"torch_dtype", m.kv_dtype == dtype::bf16   ? "bfloat16"
                             : m.kv_dtype == dtype::fp16 ? "float16"
                                                         : "float32"},
             {"layer_types", types},
             {"per_layer_config", per_layer}};
  if (m.hidden_size > 0) hf["hidden_size"] = m.hidden_size;
  if (window > 0) hf["sliding_window"] = window;
  return hf;
}

generated_model generate_model(uint64_t seed, int max_layers) {
  if (max_layers < 1 || max_layers > 64)
    throw input_error("arguments", "max_layers", std::to_string(max_layers), "must be in 1..64");
  geometry_limits lim;
  lim.max_layers = max_layers;
  // splitmix64 of the seed: neighbouring seeds are unrelated streams.
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  sized_geometry g = geometries(lim)(rc::Random(z ^ (z >> 31)), 100).value();
  g.model.name = "HeadroomGenerated";
  generated_model out;
  out.seed = seed;
  out.tp = g.tp;
  out.hf_config = to_hf_config(g.model);
  const model_geometry parsed = parse_model(out.hf_config, "generated seed " + std::to_string(seed));
  const auto a = to_rank(parsed, g.tp).layers, b = to_rank(g.model, g.tp).layers;
  bool same = a.size() == b.size();
  for (std::size_t i = 0; same && i < a.size(); ++i)
    same = a[i].name == b[i].name && a[i].kind == b[i].kind && a[i].num_heads == b[i].num_heads &&
           a[i].num_kv_heads == b[i].num_kv_heads && a[i].head_size == b[i].head_size &&
           a[i].sliding_window == b[i].sliding_window;
  if (!same) throw std::logic_error("generate: the Hugging Face form reads back as another geometry");
  out.explicit_form = to_json(parsed);
  return out;
}

}  // namespace headroom::generators
