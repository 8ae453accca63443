// transformers' per_layer_config (generic and Gemma 4), the bundled Gemma 4 checkpoints, hidden_size
// and Mamba state layers. Expected geometries are written out from the released configs' fields
// (configs/README.md), not read back from the loader.
#include <gtest/gtest.h>

#include "core/model/loader.hpp"
#include "model_test_util.hpp"

namespace headroom::test {
namespace {

// Gemma 4: full attention at (i + 1) % 6 == 0 with head size 512 and `full_kv` kv heads, sliding
// layers (window 1024) with head size 256 and `sliding_kv`; `heads` query heads everywhere.
void expect_gemma4(const model_geometry& m, std::size_t n, int64_t heads, int64_t sliding_kv,
                   int64_t full_kv) {
  ASSERT_EQ(m.layers.size(), n);
  EXPECT_EQ(m.num_attention_heads, heads);
  EXPECT_EQ(m.num_kv_heads, sliding_kv);
  EXPECT_EQ(m.head_size, 256);  // the config's head_dim (vLLM's convertor says 512, see catalogue)
  for (std::size_t i = 0; i < n; ++i) {
    const layer_geometry& l = m.layers[i];
    const bool full = (i + 1) % 6 == 0;
    EXPECT_EQ(l.kind, full ? attn_kind::full : attn_kind::sliding) << i;
    EXPECT_EQ(l.num_heads, heads) << i;
    EXPECT_EQ(l.num_kv_heads, full ? full_kv : sliding_kv) << i;
    EXPECT_EQ(l.head_size, full ? 512 : 256) << i;
    EXPECT_EQ(l.head_size_v, l.head_size) << i;
    EXPECT_EQ(l.sliding_window, full ? 0 : 1024) << i;
  }
}

TEST(per_layer_config, gemma4_released_checkpoints) {
  const model_geometry a = load_model(config_path("gemma4-26b-a4b.json"));
  expect_gemma4(a, 30, 16, 8, 2);
  EXPECT_EQ(a.hidden_size, 2816);
  const model_geometry b = load_model(config_path("gemma4-31b.json"));
  expect_gemma4(b, 60, 32, 16, 4);
  EXPECT_EQ(b.hidden_size, 5376);
  // 31B at TP 4 (#54191): 1 kv head per rank on full layers, 4 on sliding layers.
  const rank_geometry r = to_rank(b, 4);
  EXPECT_EQ(r.layers[5].num_kv_heads, 1);
  EXPECT_EQ(r.layers[4].num_kv_heads, 4);
}

TEST(per_layer_config, gemma4_saved_form_loads_to_the_same_geometry) {
  const model_geometry flat = load_model(config_path("gemma4-26b-a4b.json"));
  const model_geometry saved = load_model(config_path("gemma4-26b-a4b-per-layer.json"));
  expect_gemma4(saved, 30, 16, 8, 2);
  EXPECT_EQ(saved, flat);
  // Its fields are named as the file spells them: a kv override of 3 does not divide 16 heads.
  json j = read_config("gemma4-26b-a4b-per-layer.json");
  j["text_config"]["per_layer_config"]["11"]["num_key_value_heads"] = 3;
  expect_bad(j, "text_config.per_layer_config.11.num_key_value_heads", "3");
}

TEST(per_layer_config, gemma4_head_override_is_unconditional_and_defaults_to_512) {
  json j = read_config("gemma4-26b-a4b.json");
  j["text_config"]["attention_k_eq_v"] = false;  // E2B/E4B style: kv stays, head 512 does not
  j["text_config"].erase("global_head_dim");     // transformers' default: 512
  expect_gemma4(parse(j), 30, 16, 8, 8);
  // With per_layer_config present (even empty) transformers ignores the flat keys.
  j["text_config"]["per_layer_config"] = json::object();
  j["text_config"]["global_head_dim"] = 128;
  j["text_config"]["attention_k_eq_v"] = true;
  const model_geometry m = parse(j);
  EXPECT_EQ(m.layers[5].head_size, 256);
  EXPECT_EQ(m.layers[5].num_kv_heads, 8);
  // The last layer is full attention whatever layer_types says (transformers forces it).
  j["text_config"]["layer_types"][29] = "sliding_attention";
  EXPECT_EQ(parse(j).layers[29].kind, attn_kind::full);
}

TEST(per_layer_config, generic_overrides) {
  json j = small_hf();  // 4 layers, 32 heads, 8 kv heads, head size 4096 / 32 = 128
  j["per_layer_config"] = {{"1", {{"num_attention_heads", 16}, {"num_kv_heads", 4}}},
                           {"02", {{"skip", {"mlp", "attention"}}, {"intermediate_size", 7}}},
                           {"3", {{"head_dim", 64}, {"skip", {"mlp"}}}}};
  const model_geometry m = parse(j);
  EXPECT_EQ(m.layers[0].num_heads, 32);
  EXPECT_EQ(m.layers[0].num_kv_heads, 8);
  EXPECT_EQ(m.layers[1].num_heads, 16);
  EXPECT_EQ(m.layers[1].num_kv_heads, 4);
  EXPECT_EQ(m.layers[2].kind, attn_kind::none);
  EXPECT_FALSE(m.layers[2].mamba_state);
  EXPECT_EQ(m.layers[2].name, "model.layers.2");
  EXPECT_EQ(m.layers[3].head_size, 64);
  EXPECT_EQ(m.layers[3].head_size_v, 64);
  EXPECT_EQ(m.layers[3].kind, attn_kind::full);
  expect_input_error([&] { to_rank(m, 32); },  // 16 heads do not split over 32 ranks
                     {"'per_layer_config.1.num_attention_heads'", "= 16"});
}

TEST(per_layer_config, windows_and_layer_types) {
  json j = small_hf();
  j["sliding_window"] = 4096;  // Mistral style: every layer slides ...
  j["per_layer_config"] = {{"0", {{"sliding_window", nullptr}}}, {"2", {{"sliding_window", 512}}}};
  model_geometry m = parse(j);
  EXPECT_EQ(m.layers[0].kind, attn_kind::full);  // ... but a layer overridden to no window
  EXPECT_EQ(m.layers[0].sliding_window, 0);
  EXPECT_EQ(m.layers[1].sliding_window, 4096);
  EXPECT_EQ(m.layers[2].sliding_window, 512);
  j.erase("sliding_window");  // now only layer 2 has a window
  m = parse(j);
  EXPECT_EQ(m.layers[1].kind, attn_kind::full);
  EXPECT_EQ(m.layers[2].kind, attn_kind::sliding);
  // With layer_types the list decides the kind; an entry's own list decides its layer.
  j["layer_types"] = {"full_attention", "sliding_attention", "full_attention", "mamba"};
  j["per_layer_config"]["1"] = {{"sliding_window", 128}};
  j["per_layer_config"]["2"] = {{"layer_types", {"a", "b", "linear_attention", "c"}}};
  m = parse(j);
  EXPECT_EQ(m.layers[1].sliding_window, 128);
  EXPECT_EQ(m.layers[2].kind, attn_kind::none);
  EXPECT_TRUE(m.layers[2].mamba_state);
  EXPECT_TRUE(m.layers[3].mamba_state);
  j["per_layer_config"]["1"] = {{"sliding_window", nullptr}};  // a sliding layer needs a window
  expect_bad(j, "per_layer_config.1.sliding_window", "0");
}

TEST(per_layer_config, bad_entries_name_the_field) {
  json j = read_config("gemma4-26b-a4b-per-layer.json");
  json& plc = j["text_config"]["per_layer_config"];
  const std::string p = "text_config.per_layer_config";
  auto with = [&](const std::string& key, const json& entry) {
    json k = j;
    k["text_config"]["per_layer_config"][key] = entry;
    return k;
  };
  expect_bad(with("30", json::object()), p, "\"30\"");  // 30 layers: 0..29
  expect_bad(with("-1", json::object()), p, "\"-1\"");
  expect_bad(with("1.5", json::object()), p, "\"1.5\"");
  expect_bad(with("x", json::object()), p, "\"x\"");
  expect_bad(with("5", json::object()), p, "\"5\"");  // the same layer as "05"
  expect_bad(with("05", 512), p + ".05", "512");
  expect_bad(with("05", {{"head_dim", "512"}}), p + ".05.head_dim", "\"512\"");
  expect_bad(with("05", {{"head_dim", 512.5}}), p + ".05.head_dim", "512.5");
  expect_bad(with("05", {{"head_dim", 0}}), p + ".05.head_dim", "0");
  expect_bad(with("05", {{"head_dim", nullptr}}), p + ".05.head_dim", "null");
  expect_bad(with("05", {{"num_attention_heads", -16}}), p + ".05.num_attention_heads", "-16");
  expect_bad(with("05", {{"n_head_kv", true}}), p + ".05.n_head_kv", "true");
  expect_bad(with("05", {{"sliding_window", -1}}), p + ".05.sliding_window", "-1");
  expect_bad(with("05", {{"skip", "attention"}}), p + ".05.skip", "\"attention\"");
  expect_bad(with("05", {{"skip", {1}}}), p + ".05.skip[0]", "1");
  expect_bad(with("05", {{"layer_types", {"full_attention"}}}), p + ".05.layer_types",
             "[\"full_attention\"]");
  plc = json::array({1, 2});
  expect_bad(j, p, "[1,2]");
}

TEST(per_layer_config, hidden_size_and_state_layers_in_both_forms) {
  json j = small_hf();
  j["head_dim"] = 128;
  j["hidden_size"] = 3072;  // Laguna S-2.1's shape: 3072 // 32 = 96, not 128
  j["layer_types"] = {"full_attention", "mamba", "no_op", "linear_attention"};
  const model_geometry m = parse(j);
  EXPECT_EQ(m.hidden_size, 3072);
  EXPECT_EQ(m.head_size, 128);
  const bool state[] = {false, true, false, true};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(m.layers[i].mamba_state, state[i]) << i;
  const json e = to_json(m);
  EXPECT_EQ(e["hidden_size"], 3072);
  EXPECT_EQ(e["layers"][1]["type"], "mamba");
  EXPECT_EQ(e["layers"][2]["type"], "none");
  EXPECT_EQ(parse_model(e, "again.json"), m);
  json bad = e;
  bad["hidden_size"] = -1;
  expect_bad(bad, "hidden_size", "-1");
  j["hidden_size"] = "3072";
  expect_bad(j, "hidden_size", "\"3072\"");
  j.erase("hidden_size");
  EXPECT_EQ(parse(j).hidden_size, 0);  // unknown
}

}  // namespace
}  // namespace headroom::test
