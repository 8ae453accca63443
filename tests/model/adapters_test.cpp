// Adapters for heterogeneous Hugging Face formats (docs/engines.md §2): Step-3.5, MiMo-V2, Gemma 4 and
// Nemotron-NAS, each on its bundled example and on the errors its own fields can carry.
#include <gtest/gtest.h>

#include "core/model/loader.hpp"
#include "model_test_util.hpp"

namespace headroom::test {
namespace {

TEST(adapters, step3p5_other_setting_on_sliding_layers) {
  const model_geometry m = load_model(config_path("step3p5-example.json"));
  EXPECT_EQ(m.num_attention_heads, 64);
  EXPECT_EQ(m.num_kv_heads, 8);  // num_attention_groups
  ASSERT_EQ(m.layers.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    const bool full = i % 4 == 0;
    EXPECT_EQ(m.layers[i].kind, full ? attn_kind::full : attn_kind::sliding) << i;
    EXPECT_EQ(m.layers[i].num_heads, full ? 64 : 96) << i;
    EXPECT_EQ(m.layers[i].num_kv_heads, 8);
    EXPECT_EQ(m.layers[i].sliding_window, full ? 0 : 512);
  }
  EXPECT_EQ(to_rank(m, 4).layers[1].num_heads, 24);
}

TEST(adapters, step3p5_without_layer_types_slides_even_layers) {
  json j = read_config("step3p5-example.json");
  j.erase("layer_types");  // vLLM: even layers slide; the other setting needs layer_types
  const model_geometry m = parse(j);
  EXPECT_EQ(m.layers[0].kind, attn_kind::sliding);
  EXPECT_EQ(m.layers[0].num_heads, 64);
  EXPECT_EQ(m.layers[1].kind, attn_kind::full);
  j["attention_other_setting"]["num_attention_groups"] = -1;
  expect_bad(j, "attention_other_setting.num_attention_groups", "-1");
  j["attention_other_setting"] = 3;
  expect_bad(j, "attention_other_setting", "3");
}

TEST(adapters, mimo_v2_pattern_one_is_sliding) {
  const model_geometry m = load_model(config_path("mimo-v2-example.json"));
  ASSERT_EQ(m.layers.size(), 8u);
  const layer_geometry& full = m.layers[0];
  EXPECT_EQ(full.kind, attn_kind::full);
  EXPECT_EQ(full.num_heads, 64);
  EXPECT_EQ(full.num_kv_heads, 4);
  EXPECT_EQ(full.head_size, 192);
  EXPECT_EQ(full.head_size_v, 128);
  const layer_geometry& swa = m.layers[1];
  EXPECT_EQ(swa.kind, attn_kind::sliding);
  EXPECT_EQ(swa.num_heads, 64);
  EXPECT_EQ(swa.num_kv_heads, 8);
  EXPECT_EQ(swa.head_size, 192);
  EXPECT_EQ(swa.head_size_v, 128);
  EXPECT_EQ(swa.sliding_window, 128);
  EXPECT_EQ(m.layers[4].kind, attn_kind::full);
}

TEST(adapters, mimo_v2_bad_fields) {
  json j = read_config("mimo-v2-example.json");
  j["hybrid_layer_pattern"][2] = 2;
  expect_bad(j, "hybrid_layer_pattern[2]", "2");
  j["hybrid_layer_pattern"] = {0, 1, 1};
  expect_bad(j, "hybrid_layer_pattern", "a list of 3");
  j = read_config("mimo-v2-example.json");
  j.erase("swa_head_dim");
  expect_bad(j, "swa_head_dim", "(missing)");
  j = read_config("mimo-v2-example.json");
  j.erase("sliding_window_size");
  expect_bad(j, "sliding_window", "(missing)");
}

TEST(adapters, gemma4_global_layers) {
  const model_geometry m = load_model(config_path("gemma4-example.json"));
  EXPECT_EQ(m.name, "Gemma4ForConditionalGeneration");
  ASSERT_EQ(m.layers.size(), 12u);
  for (std::size_t i = 0; i < 12; ++i) {
    const layer_geometry& l = m.layers[i];
    const bool full = (i + 1) % 6 == 0;
    EXPECT_EQ(l.kind, full ? attn_kind::full : attn_kind::sliding) << i;
    EXPECT_EQ(l.num_heads, 16);
    EXPECT_EQ(l.num_kv_heads, full ? 2 : 8) << i;
    EXPECT_EQ(l.head_size, full ? 512 : 256) << i;
    EXPECT_EQ(l.sliding_window, full ? 0 : 1024);
  }
  const rank_geometry r = to_rank(m, 4);
  EXPECT_EQ(r.layers[5].num_kv_heads, 1);  // 2 global kv heads, replicated over 4 ranks
  EXPECT_EQ(r.layers[4].num_kv_heads, 2);
  json j = read_config("gemma4-example.json");
  j["text_config"]["num_global_key_value_heads"] = 3;  // does not divide 16 heads
  expect_bad(j, "text_config.num_global_key_value_heads", "3");
}

TEST(adapters, gemma4_kv_override_needs_k_eq_v_and_default_types) {
  json j = read_config("gemma4-example.json");
  j["text_config"].erase("attention_k_eq_v");
  j["text_config"].erase("layer_types");
  const model_geometry m = parse(j);
  EXPECT_EQ(m.layers[5].kind, attn_kind::full);
  EXPECT_EQ(m.layers[5].num_kv_heads, 8);
  EXPECT_EQ(m.layers[5].head_size, 512);
  EXPECT_EQ(m.layers[11].kind, attn_kind::full);  // the last layer is always full
  EXPECT_EQ(m.layers[10].kind, attn_kind::sliding);
  j["text_config"]["global_head_dim"] = 100000;
  expect_bad(j, "text_config.global_head_dim", "100000");
}

TEST(adapters, nemotron_nas_blocks) {
  const model_geometry m = load_model(config_path("nemotron-nas-example.json"));
  EXPECT_EQ(m.num_kv_heads, 4);  // first block with attention: 32 / 8
  ASSERT_EQ(m.layers.size(), 6u);
  const int64_t kv[] = {4, 4, 0, 8, 0, 2};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(m.layers[i].kind, kv[i] ? attn_kind::full : attn_kind::none) << i;
    EXPECT_EQ(m.layers[i].num_kv_heads, kv[i]) << i;
    EXPECT_EQ(m.layers[i].num_heads, kv[i] ? 32 : 0) << i;
  }
  EXPECT_EQ(m.layers[2].name, "model.layers.2");
  EXPECT_EQ(to_rank(m, 8).layers[3].num_kv_heads, 1);
  json j = read_config("nemotron-nas-example.json");
  j["num_attention_heads"] = 48;  // kv heads 6, 6, 12, 3
  const model_geometry m48 = parse(j);
  EXPECT_EQ(m48.num_kv_heads, 6);
  expect_input_error([&] { to_rank(m48, 4); },
                     {"'num_attention_heads / block_configs[0].attention.n_heads_in_group'", "= 6", "tp 4"});
}

TEST(adapters, nemotron_nas_bad_blocks) {
  json j = read_config("nemotron-nas-example.json");
  j["block_configs"][3]["attention"]["n_heads_in_group"] = 5;
  expect_bad(j, "block_configs[3].attention.n_heads_in_group", "5");
  j["block_configs"][3]["attention"]["n_heads_in_group"] = 0;
  expect_bad(j, "block_configs[3].attention.n_heads_in_group", "0");
  j["block_configs"][3]["attention"].erase("n_heads_in_group");
  expect_bad(j, "block_configs[3].attention.n_heads_in_group", "(missing)");
  j["block_configs"][3] = {{"ffn", json::object()}};
  expect_bad(j, "block_configs[3].attention", "(missing)");
  j["block_configs"][3] = "attention";
  expect_bad(j, "block_configs[3]", "\"attention\"");
  j["block_configs"].erase(3);
  expect_bad(j, "block_configs", "a list of 5");
}

}  // namespace
}  // namespace headroom::test
