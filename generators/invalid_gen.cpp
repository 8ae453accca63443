// Invalid inputs: one defect applied to a valid generated config or case.
#include "generators/invalid_gen.hpp"

#include <functional>

#include "core/model/loader.hpp"
#include "generators/case_gen.hpp"
#include "generators/geometry_gen.hpp"

namespace headroom::generators {

namespace {

using nlohmann::json;

// A defect of layer i (an attention layer) of the explicit form; returns the field to be named.
struct layer_defect {
  const char* name;
  std::function<std::string(json& layers, std::size_t i)> apply;
};

std::string at(std::size_t i, const char* f) { return "layers[" + std::to_string(i) + "]." + f; }

std::string set_field(json& layers, std::size_t i, const char* f, json v) {
  layers[i][f] = std::move(v);
  return at(i, f);
}

const std::vector<layer_defect>& layer_defects() {
  static const std::vector<layer_defect> d = {
      {"kv_not_dividing",
       [](json& l, std::size_t i) {
         return set_field(l, i, "num_kv_heads", l[i]["num_heads"].get<int64_t>() + 1);
       }},
      {"zero_heads", [](json& l, std::size_t i) { return set_field(l, i, "num_heads", 0); }},
      {"negative_heads", [](json& l, std::size_t i) { return set_field(l, i, "num_heads", -4); }},
      {"huge_heads", [](json& l, std::size_t i) { return set_field(l, i, "num_heads", 1000000000000LL); }},
      {"uint64_heads", [](json& l, std::size_t i) { return set_field(l, i, "num_heads", UINT64_MAX); }},
      {"string_heads", [](json& l, std::size_t i) { return set_field(l, i, "num_heads", "64"); }},
      {"float_heads", [](json& l, std::size_t i) { return set_field(l, i, "num_heads", 1.5); }},
      {"bool_kv", [](json& l, std::size_t i) { return set_field(l, i, "num_kv_heads", true); }},
      {"null_head_size", [](json& l, std::size_t i) { return set_field(l, i, "head_size", nullptr); }},
      {"zero_head_size",
       [](json& l, std::size_t i) {
         l[i]["head_size_v"] = 0;
         return set_field(l, i, "head_size", 0);
       }},
      {"huge_head_size", [](json& l, std::size_t i) { return set_field(l, i, "head_size", 65537); }},
      {"missing_heads",
       [](json& l, std::size_t i) {
         l[i].erase("num_heads");
         return at(i, "num_heads");
       }},
      {"missing_name",
       [](json& l, std::size_t i) {
         l[i].erase("name");
         return at(i, "name");
       }},
      {"missing_type",
       [](json& l, std::size_t i) {
         l[i].erase("type");
         return at(i, "type");
       }},
      {"unknown_type", [](json& l, std::size_t i) { return set_field(l, i, "type", "banana_attention"); }},
      {"sliding_without_window",
       [](json& l, std::size_t i) {
         l[i]["type"] = "sliding_attention";
         return set_field(l, i, "sliding_window", 0);
       }},
      {"full_with_window",
       [](json& l, std::size_t i) {
         l[i]["type"] = "full_attention";
         return set_field(l, i, "sliding_window", 7);
       }},
      {"negative_window", [](json& l, std::size_t i) { return set_field(l, i, "sliding_window", -1); }},
      {"layer_not_object",
       [](json& l, std::size_t i) {
         l[i] = 42;
         return "layers[" + std::to_string(i) + "]";
       }},
  };
  return d;
}

// Model-wide defects of the explicit form.
struct model_defect {
  const char* name;
  std::function<std::string(json& m)> apply;
};

const std::vector<model_defect>& model_defects() {
  static const std::vector<model_defect> d = {
      {"model_heads_zero",
       [](json& m) {
         m["num_attention_heads"] = 0;
         return std::string("num_attention_heads");
       }},
      {"model_kv_not_dividing",
       [](json& m) {
         m["num_key_value_heads"] = m["num_attention_heads"].get<int64_t>() + 1;
         return std::string("num_key_value_heads");
       }},
      {"head_dim_zero",
       [](json& m) {
         m["head_dim"] = 0;
         return std::string("head_dim");
       }},
      {"bad_dtype",
       [](json& m) {
         m["dtype"] = "float8_e9";
         return std::string("dtype");
       }},
      {"name_not_string",
       [](json& m) {
         m["name"] = 5;
         return std::string("name");
       }},
      {"empty_layers",
       [](json& m) {
         m["layers"] = json::array();
         return std::string("layers");
       }},
      {"no_attention",
       [](json& m) {
         for (auto& l : m["layers"])
           l = {{"name", l["name"]},
                {"type", "mamba"},
                {"num_heads", 0},
                {"num_kv_heads", 0},
                {"head_size", 0}};
         return std::string("layers");
       }},
      {"duplicate_name",
       [](json& m) {
         auto& ls = m["layers"];
         ls.push_back(ls[0]);
         return "layers[" + std::to_string(ls.size() - 1) + "].name";
       }},
  };
  return d;
}

// The generic Hugging Face form of a generated geometry (kv and head size taken model-wide).
json hf_form(const model_geometry& m) {
  json per_layer = json::array(), types = json::array();
  int64_t window = 0;
  for (const auto& l : m.layers) {
    per_layer.push_back(l.kind == attn_kind::none ? m.num_attention_heads : l.num_heads);
    types.push_back(l.kind == attn_kind::none ? "linear_attention" : to_string(l.kind));
    if (l.kind == attn_kind::sliding) window = l.sliding_window;
  }
  json j = {{"num_hidden_layers", m.layers.size()},       {"num_attention_heads", m.num_attention_heads},
            {"num_key_value_heads", m.num_kv_heads},      {"head_dim", m.head_size},
            {"num_attention_heads_per_layer", per_layer}, {"layer_types", types}};
  if (window > 0) j["sliding_window"] = window;
  return j;
}

const std::vector<model_defect>& hf_defects() {
  static const std::vector<model_defect> d = {
      {"hf_per_layer_short",
       [](json& j) {
         j["num_attention_heads_per_layer"].erase(j["num_attention_heads_per_layer"].size() - 1);
         return std::string("num_attention_heads_per_layer");
       }},
      {"hf_per_layer_string",
       [](json& j) {  // on an attention layer: others' entries are unread
         std::size_t i = 0;
         while (j["layer_types"][i] == "linear_attention") ++i;
         j["num_attention_heads_per_layer"][i] = "48";
         return "num_attention_heads_per_layer[" + std::to_string(i) + "]";
       }},
      {"hf_layer_type_unknown",
       [](json& j) {
         j["layer_types"][0] = "quantum_attention";
         return std::string("layer_types[0]");
       }},
      {"hf_layers_zero",
       [](json& j) {
         j["num_hidden_layers"] = 0;
         return std::string("num_hidden_layers");
       }},
      {"hf_no_head_dim_no_hidden",
       [](json& j) {
         j.erase("head_dim");
         return std::string("hidden_size");
       }},
      {"hf_kv_string",
       [](json& j) {
         j["num_key_value_heads"] = "8";
         return std::string("num_key_value_heads");
       }},
      {"hf_kv_not_dividing_layer",
       [](json& j) {  // model-wide or layer 0: same kv field
         j["num_key_value_heads"] = 2;
         j["num_attention_heads_per_layer"][0] = 3;
         j["layer_types"][0] = "full_attention";
         return std::string("num_key_value_heads");
       }},
      {"hf_text_config_not_object",
       [](json& j) {
         j["text_config"] = 5;
         return std::string("text_config");
       }},
      {"hf_root_array",
       [](json& j) {
         j = json::array({j});
         return std::string("<root>");
       }},
  };
  return d;
}

// A uniform index in [0, n) (gen::inRange scales with the size; the defect kinds should not).
rc::Gen<std::size_t> any_index(std::size_t n) {
  std::vector<std::size_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i;
  return rc::gen::elementOf(v);
}

std::vector<std::size_t> attention_layers(const model_geometry& m) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    if (m.layers[i].kind != attn_kind::none) idx.push_back(i);
  return idx;
}

rc::Gen<invalid_input> defects_of(const sized_geometry& g) {
  const model_geometry& m = g.model;
  auto layer =
      rc::gen::map(rc::gen::tuple(any_index(layer_defects().size()), rc::gen::elementOf(attention_layers(m))),
                   [m](const std::tuple<std::size_t, std::size_t>& t) {
                     json j = to_json(m);
                     const auto& d = layer_defects()[std::get<0>(t)];
                     std::string field = d.apply(j["layers"], std::get<1>(t));
                     return invalid_input{j, d.name, field};
                   });
  auto pick = [](const std::vector<model_defect>& list, json base) {
    return rc::gen::map(any_index(list.size()), [&list, base](std::size_t k) {
      json j = base;
      std::string field = list[k].apply(j);
      return invalid_input{j, list[k].name, field};
    });
  };
  return rc::gen::weightedOneOf<invalid_input>(
      {{4, layer}, {2, pick(model_defects(), to_json(m))}, {2, pick(hf_defects(), hf_form(m))}});
}

// Defects of a case file outside its model.
const std::vector<model_defect>& case_defects() {
  static const std::vector<model_defect> d = {
      {"case_not_object",
       [](json& j) {
         j = json::array();
         return std::string("<case>");
       }},
      {"tp_zero",
       [](json& j) {
         j["tp"] = 0;
         return std::string("tp");
       }},
      {"tp_string",
       [](json& j) {
         j["tp"] = "2";
         return std::string("tp");
       }},
      {"tp_missing",
       [](json& j) {
         j.erase("tp");
         return std::string("tp");
       }},
      {"backend_unknown",
       [](json& j) {
         j["backend"] = "cudnn";
         return std::string("backend");
       }},
      {"policy_unknown",
       [](json& j) {
         j["policy"] = "sometimes";
         return std::string("policy");
       }},
      {"grouping_unknown",
       [](json& j) {
         j["grouping"] = 3;
         return std::string("grouping");
       }},
      {"hybrid_not_bool",
       [](json& j) {
         j["hybrid"] = "yes";
         return std::string("hybrid");
       }},
      {"batch_missing",
       [](json& j) {
         j.erase("batch");
         return std::string("batch");
       }},
      {"batch_empty",
       [](json& j) {
         j["batch"] = {{"seq_lens", json::array()}, {"query_lens", json::array()}};
         return std::string("batch.seq_lens");
       }},
      {"batch_lengths_differ",
       [](json& j) {
         j["batch"]["query_lens"].push_back(1);
         return std::string("batch.query_lens");
       }},
      {"seq_len_zero",
       [](json& j) {
         j["batch"]["seq_lens"][0] = 0;
         return std::string("batch.seq_lens[0]");
       }},
      {"query_longer_than_seq",
       [](json& j) {
         j["batch"]["query_lens"][0] = j["batch"]["seq_lens"][0].get<int64_t>() + 1;
         return std::string("batch.query_lens[0]");
       }},
      {"seed_negative",
       [](json& j) {
         j["seed"] = -1;
         return std::string("seed");
       }},
      {"max_num_seqs_zero",
       [](json& j) {
         j["triton"]["max_num_seqs"] = 0;
         return std::string("triton.max_num_seqs");
       }},
      {"page_size_zero",
       [](json& j) {
         j["flashinfer"]["page_size"] = 0;
         return std::string("flashinfer.page_size");
       }},
      {"model_not_object",
       [](json& j) {
         j["model"] = "laguna";
         return std::string("<root>");
       }},
  };
  return d;
}

}  // namespace

rc::Gen<invalid_input> invalid_cases() {
  case_profile p;
  p.policies = {policy::per_layer, policy::model_wide, policy::max};
  p.groupings = {grouping::heads, grouping::legacy, grouping::proposer};
  return rc::gen::mapcat(raw_cases(p), [](const check_case& c) {
    return rc::gen::map(any_index(case_defects().size()), [c](std::size_t k) {
      json j = to_json(c);
      std::string field = case_defects()[k].apply(j);
      return invalid_input{j, case_defects()[k].name, field};
    });
  });
}

rc::Gen<invalid_input> invalid_configs() {
  geometry_limits lim;
  lim.max_layers = 5;
  return rc::gen::mapcat(geometries(lim), &defects_of);
}

}  // namespace headroom::generators
