// Loading Hugging Face configs (docs/engines.md §2): Laguna's per-layer heads and layer types, the uniform
// Llama-3-8B, kv-head aliases, the head_dim fallback, text_config nesting, sliding-window rules,
// dtypes and names; plus file-level errors (missing file, malformed JSON, non-object).
#include <gtest/gtest.h>

#include "core/model/loader.hpp"
#include "model_test_util.hpp"

namespace headroom::test {
namespace {

TEST(load, laguna_per_layer_heads_and_kinds) {
  const model_geometry m = load_model(config_path("laguna-xs2.json"));
  EXPECT_EQ(m.name, "LagunaForCausalLM");
  EXPECT_EQ(m.source, config_path("laguna-xs2.json"));
  EXPECT_EQ(m.num_attention_heads, 48);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.head_size, 128);
  EXPECT_EQ(m.kv_dtype, dtype::bf16);
  ASSERT_EQ(m.layers.size(), 40u);
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const layer_geometry& l = m.layers[i];
    const bool full = i % 4 == 0;
    EXPECT_EQ(l.name, "model.layers." + std::to_string(i) + ".self_attn.attn");
    EXPECT_EQ(l.kind, full ? attn_kind::full : attn_kind::sliding) << i;
    EXPECT_EQ(l.num_heads, full ? 48 : 64) << i;
    EXPECT_EQ(l.num_kv_heads, 8);
    EXPECT_EQ(l.head_size, 128);
    EXPECT_EQ(l.head_size_v, 128);
    EXPECT_EQ(l.sliding_window, full ? 0 : 512) << i;
  }
}

TEST(load, llama_uniform_with_head_dim_fallback) {
  const model_geometry m = load_model(config_path("llama-3-8b.json"));
  EXPECT_EQ(m.name, "LlamaForCausalLM");
  EXPECT_EQ(m.num_attention_heads, 32);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.head_size, 4096 / 32);
  ASSERT_EQ(m.layers.size(), 32u);
  for (const layer_geometry& l : m.layers) {
    EXPECT_EQ(l.kind, attn_kind::full);
    EXPECT_EQ(l.num_heads, 32);
    EXPECT_EQ(l.num_kv_heads, 8);
    EXPECT_EQ(l.head_size, 128);
    EXPECT_EQ(l.sliding_window, 0);
  }
}

TEST(load, kv_aliases_first_present_wins) {
  json j = small_hf();
  j.erase("num_key_value_heads");
  EXPECT_EQ(parse(j).num_kv_heads, 32);  // no alias: as many kv heads as query heads
  j["num_attention_groups"] = 2;
  EXPECT_EQ(parse(j).num_kv_heads, 2);
  j["multi_query_group_num"] = 4;
  EXPECT_EQ(parse(j).num_kv_heads, 4);
  j["num_key_value_heads"] = 8;
  j["num_kv_heads"] = 16;
  EXPECT_EQ(parse(j).num_kv_heads, 16);
  j["n_head_kv"] = 1;
  EXPECT_EQ(parse(j).num_kv_heads, 1);
  j["n_head_kv"] = nullptr;  // null counts as absent
  EXPECT_EQ(parse(j).num_kv_heads, 16);
}

TEST(load, head_dim_wins_when_positive) {
  json j = small_hf();
  j["head_dim"] = 256;
  EXPECT_EQ(parse(j).head_size, 256);
  j["head_dim"] = 0;
  EXPECT_EQ(parse(j).head_size, 128);
  j["hidden_size"] = 4100;  // integer division, as vLLM
  EXPECT_EQ(parse(j).head_size, 128);
}

TEST(load, text_config_nesting_and_unknown_keys) {
  json j = {{"architectures", {"SomeForConditionalGeneration"}},
            {"torch_dtype", "float16"},
            {"vision_config", {{"num_attention_heads", 7}}},
            {"text_config", small_hf()}};
  j["text_config"].erase("torch_dtype");
  j["text_config"]["some_unknown_key"] = {1, 2, 3};
  const model_geometry m = parse(j);
  EXPECT_EQ(m.name, "SomeForConditionalGeneration");
  EXPECT_EQ(m.kv_dtype, dtype::fp16);
  EXPECT_EQ(m.num_attention_heads, 32);
  EXPECT_EQ(m.layers.size(), 4u);
  j["text_config"]["num_attention_heads"] = "32";
  expect_bad(j, "text_config.num_attention_heads", "\"32\"");
}

TEST(load, sliding_window_rules_without_layer_types) {
  json j = small_hf();
  j["sliding_window"] = 4096;  // Mistral: the model-wide window applies to every layer
  for (const auto& l : parse(j).layers) {
    EXPECT_EQ(l.kind, attn_kind::sliding);
    EXPECT_EQ(l.sliding_window, 4096);
  }
  j["use_sliding_window"] = false;  // Qwen2: a window that is switched off
  for (const auto& l : parse(j).layers) EXPECT_EQ(l.kind, attn_kind::full);
  j.erase("use_sliding_window");
  j["sliding_window_pattern"] = 2;  // Gemma 3: every second layer full
  const model_geometry m = parse(j);
  EXPECT_EQ(m.layers[0].kind, attn_kind::sliding);
  EXPECT_EQ(m.layers[1].kind, attn_kind::full);
  EXPECT_EQ(m.layers[1].sliding_window, 0);
  j["sliding_window"] = nullptr;
  for (const auto& l : parse(j).layers) EXPECT_EQ(l.kind, attn_kind::full);
}

TEST(load, no_attention_layers_are_kept_but_not_ranked) {
  json j = small_hf();
  j["layer_types"] = {"full_attention", "linear_attention", "mamba", "full_attention"};
  const model_geometry m = parse(j);
  ASSERT_EQ(m.layers.size(), 4u);
  EXPECT_EQ(m.layers[1].kind, attn_kind::none);
  EXPECT_EQ(m.layers[2].kind, attn_kind::none);
  EXPECT_EQ(to_rank(m, 2).layers.size(), 2u);
  j["layer_types"] = {"none", "no_op", "mamba", "linear_attention"};
  expect_bad(j, "layers", "4 layers");
}

TEST(load, dtypes_and_names) {
  json j = small_hf();
  for (auto [s, d] : {std::pair{"bf16", dtype::bf16},
                      {"half", dtype::fp16},
                      {"fp16", dtype::fp16},
                      {"float32", dtype::fp32},
                      {"float", dtype::fp32},
                      {"fp32", dtype::fp32}}) {
    j["torch_dtype"] = s;
    EXPECT_EQ(parse(j).kv_dtype, d) << s;
  }
  j.erase("torch_dtype");
  EXPECT_EQ(parse(j).kv_dtype, dtype::bf16);
  j["dtype"] = "float16";
  EXPECT_EQ(parse(j).kv_dtype, dtype::fp16);
  EXPECT_EQ(dtype_bytes(dtype::bf16), 2);
  EXPECT_EQ(dtype_bytes(dtype::fp32), 4);
  j.erase("architectures");
  EXPECT_EQ(parse(j).name, "llama");
  j.erase("model_type");
  EXPECT_EQ(parse_model(j, "dir/my-model.json").name, "my-model");
}

TEST(load, missing_file) {
  expect_input_error([] { load_model("no/such/config.json"); }, {"no/such/config.json", "'<file>'"});
  expect_input_error([] { load_model(::testing::TempDir()); }, {"'<file>'", "directory"});
}

TEST(load, malformed_json_names_position) {
  const std::string path = write_temp("malformed.json", "{\"num_attention_heads\": 32,\n");
  const std::string what =
      expect_input_error([&] { load_model(path); }, {path, "'<json>'", "byte", "line 2"});
  EXPECT_EQ(what.find("[json.exception"), std::string::npos) << what;
  const std::string empty = write_temp("empty.json", "");
  expect_input_error([&] { load_model(empty); }, {empty, "'<json>'"});
}

TEST(load, top_level_must_be_an_object) {
  const std::string path = write_temp("array.json", "[1, 2, 3]");
  expect_input_error([&] { load_model(path); }, {path, "'<root>'", "[1,2,3]"});
  expect_input_error([] { parse(json("text")); }, {"'<root>'", "\"text\""});
}

TEST(load, deeply_nested_values_are_described_not_dumped) {
  // 200k nested lists: json::dump() on them recursed past the stack in the error message. The
  // reader now refuses them at its depth limit, naming the outermost field.
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string root = write_temp("deep_root.json", deep);
  expect_input_error([&] { load_model(root); }, {root, "'<root>'", "nested deeper than 64"});
  json j = small_hf();
  j["num_attention_heads"] = "DEEP";
  std::string text = j.dump();
  text.replace(text.find("\"DEEP\""), 6, deep);
  const std::string field = write_temp("deep_field.json", text);
  expect_input_error([&] { load_model(field); }, {field, "'num_attention_heads'", "nested deeper than 64"});
  j["num_attention_heads"] = {{"a", {1}}, {"b", 2}};
  expect_bad(j, "num_attention_heads", "an object of 2 fields");
}

}  // namespace
}  // namespace headroom::test
