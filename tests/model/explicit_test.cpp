// headroom's explicit form: lossless round trip for every bundled config, the exact shape
// to_json writes, and validation of hand-written (or generated) layer lists.
#include <set>

#include <gtest/gtest.h>

#include "core/model/loader.hpp"
#include "model_test_util.hpp"

namespace headroom::test {
namespace {

const char* const bundled[] = {"laguna-xs2.json",      "llama-3-8b.json",     "step3p5-example.json",
                               "mimo-v2-example.json", "gemma4-example.json", "nemotron-nas-example.json",
                               "explicit-example.json"};

TEST(explicit_form, every_bundled_config_round_trips) {
  for (const char* name : bundled) {
    const model_geometry m = load_model(config_path(name));
    const json j = to_json(m);
    const model_geometry back = parse_model(j, "copy.json");
    EXPECT_EQ(back, m) << name;
    EXPECT_EQ(back.source, "copy.json");
    EXPECT_EQ(to_json(back), j) << name;
    // Per-rank geometry agrees too (field paths differ, numbers must not).
    const rank_geometry a = to_rank(m, 2), b = to_rank(back, 2);
    ASSERT_EQ(a.layers.size(), b.layers.size()) << name;
    for (std::size_t i = 0; i < a.layers.size(); ++i) EXPECT_EQ(a.layers[i].num_heads, b.layers[i].num_heads);
  }
}

TEST(explicit_form, shape) {
  const model_geometry m = load_model(config_path("explicit-example.json"));
  EXPECT_EQ(m.name, "explicit-example");
  ASSERT_EQ(m.layers.size(), 5u);
  EXPECT_EQ(m.layers[1].kind, attn_kind::sliding);
  EXPECT_EQ(m.layers[1].num_heads, 64);
  EXPECT_EQ(m.layers[3].kind, attn_kind::none);
  const json j = to_json(m);
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"name", "num_attention_heads", "num_key_value_heads", "head_dim",
                                         "dtype", "layers"}));
  EXPECT_EQ(j["dtype"], "bfloat16");
  EXPECT_EQ(j["layers"][1], (json{{"name", "model.layers.1.self_attn.attn"},
                                  {"type", "sliding_attention"},
                                  {"num_heads", 64},
                                  {"num_kv_heads", 8},
                                  {"head_size", 128},
                                  {"head_size_v", 128},
                                  {"sliding_window", 1024}}));
}

TEST(explicit_form, optional_fields_default) {
  json j = to_json(load_model(config_path("explicit-example.json")));
  j.erase("name");
  j.erase("dtype");
  j["layers"][0].erase("head_size_v");
  j["layers"][0].erase("sliding_window");
  const model_geometry m = parse_model(j, "gen/case-7.json");
  EXPECT_EQ(m.name, "case-7");
  EXPECT_EQ(m.kv_dtype, dtype::bf16);
  EXPECT_EQ(m.layers[0].head_size_v, 128);
  EXPECT_EQ(m.layers[0].sliding_window, 0);
}

TEST(explicit_form, layer_errors_name_the_path) {
  const json good = to_json(load_model(config_path("explicit-example.json")));
  json j = good;
  j["layers"][1]["name"] = "model.layers.0.self_attn.attn";
  expect_bad(j, "layers[1].name", "\"model.layers.0.self_attn.attn\"");
  j = good;
  j["layers"][2]["name"] = "";
  expect_bad(j, "layers[2].name", "\"\"");
  j = good;
  j["layers"][0].erase("num_kv_heads");
  expect_bad(j, "layers[0].num_kv_heads", "(missing)");
  j = good;
  j["layers"][0]["num_heads"] = 0;
  expect_bad(j, "layers[0].num_heads", "0");
  j = good;
  j["layers"][1]["num_kv_heads"] = 5;
  expect_bad(j, "layers[1].num_kv_heads", "5");  // 5 does not divide 64
  j = good;
  j["layers"][1]["sliding_window"] = 0;
  expect_bad(j, "layers[1].sliding_window", "0");
  j = good;
  j["layers"][0]["sliding_window"] = 64;
  expect_bad(j, "layers[0].sliding_window", "64");
  j = good;
  j["layers"][0]["type"] = "cross_attention";
  expect_bad(j, "layers[0].type", "\"cross_attention\"");
  j = good;
  j["layers"][0]["head_size"] = 128.0;
  expect_bad(j, "layers[0].head_size", "128.0");
  j = good;
  j["layers"][4] = 7;
  expect_bad(j, "layers[4]", "7");
  j = good;
  j["layers"] = json::array();
  expect_bad(j, "layers", "a list of 0");
  j = good;
  j["dtype"] = "int8";
  expect_bad(j, "dtype", "\"int8\"");
  j = good;
  j["num_key_value_heads"] = 3;
  expect_bad(j, "num_key_value_heads", "3");  // does not divide 32
}

TEST(explicit_form, hand_built_geometry_validates) {
  model_geometry m;
  m.source = "made.json";
  m.name = "made";
  m.num_attention_heads = 8;
  m.num_kv_heads = 2;
  m.head_size = 64;
  m.layers = {{"a", attn_kind::full, 8, 2, 64, 64, 0}, {"b", attn_kind::full, 16, 2, 64, 32, 0}};
  EXPECT_NO_THROW(validate(m));
  EXPECT_EQ(parse_model(to_json(m), "made.json"), m);
  m.layers[1].head_size = max_head_size + 1;
  expect_input_error([&] { validate(m); }, {"made.json", "'layers[1].head_size'", "65537"});
}

}  // namespace
}  // namespace headroom::test
