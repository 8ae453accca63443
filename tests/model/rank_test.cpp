// Per-rank geometry (docs/engines.md §2): query heads divide by tp (model-wide and per layer), kv heads
// split or replicate, only attention layers reach a rank, and every TP that vLLM would reject is
// an input_error naming the field the config spells and its value.
#include <gtest/gtest.h>

#include "core/model/loader.hpp"
#include "model_test_util.hpp"

namespace headroom::test {
namespace {

TEST(rank, laguna_heads_per_rank) {
  const model_geometry m = load_model(config_path("laguna-xs2.json"));
  for (int64_t tp : {1, 2, 4, 8}) {
    const rank_geometry r = to_rank(m, tp);
    EXPECT_EQ(r.tp, tp);
    EXPECT_EQ(r.model_wide_heads, 48 / tp);
    EXPECT_EQ(r.model_wide_kv_heads, 8 / tp);
    EXPECT_EQ(r.head_size, 128);
    EXPECT_EQ(r.kv_dtype, dtype::bf16);
    ASSERT_EQ(r.layers.size(), 40u);
    for (std::size_t i = 0; i < r.layers.size(); ++i) {
      const rank_layer& l = r.layers[i];
      EXPECT_EQ(l.name, m.layers[i].name);
      EXPECT_EQ(l.kind, m.layers[i].kind);
      EXPECT_EQ(l.num_heads, (i % 4 == 0 ? 48 : 64) / tp) << "tp " << tp << " layer " << i;
      EXPECT_EQ(l.num_kv_heads, 8 / tp);
      EXPECT_EQ(l.head_size, 128);
      EXPECT_EQ(l.head_size_v, 128);
      EXPECT_EQ(l.sliding_window, i % 4 == 0 ? 0 : 512);
    }
  }
}

TEST(rank, kv_heads_replicate_beyond_their_count) {
  const model_geometry m = load_model(config_path("laguna-xs2.json"));
  const rank_geometry r = to_rank(m, 16);
  EXPECT_EQ(r.model_wide_heads, 3);
  EXPECT_EQ(r.model_wide_kv_heads, 1);
  EXPECT_EQ(r.layers[1].num_heads, 4);
  EXPECT_EQ(r.layers[1].num_kv_heads, 1);
}

TEST(rank, kv_heads_that_neither_split_nor_replicate) {
  json j = small_hf();
  j["num_attention_heads"] = 24;  // divisible by 3 and by 12
  const model_geometry m = parse(j);
  expect_input_error([&] { to_rank(m, 3); }, {"test.json", "'num_key_value_heads'", "= 8"});
  expect_input_error([&] { to_rank(m, 12); }, {"'num_key_value_heads'", "= 8", "tp 12"});
  EXPECT_EQ(to_rank(m, 24).model_wide_kv_heads, 1);
}

TEST(rank, model_wide_heads_must_divide) {
  const model_geometry m = load_model(config_path("laguna-xs2.json"));
  expect_input_error([&] { to_rank(m, 5); }, {"laguna-xs2.json", "'num_attention_heads'", "= 48", "tp 5"});
  expect_input_error([&] { to_rank(m, 32); }, {"'num_attention_heads'", "= 48"});
}

TEST(rank, per_layer_heads_must_divide) {
  // Laguna at TP 3: 48 divides, the sliding layers' 64 do not (vLLM's model code asserts it).
  const model_geometry m = load_model(config_path("laguna-xs2.json"));
  expect_input_error([&] { to_rank(m, 3); },
                     {"laguna-xs2.json", "'num_attention_heads_per_layer[1]'", "= 64", "tp 3"});
  // The explicit form names its own path.
  json e = to_json(m);
  expect_input_error([&] { to_rank(parse(e), 3); }, {"'layers[1].num_heads'", "= 64"});
}

TEST(rank, per_layer_kv_heads_must_split) {
  json j = small_hf();
  j["num_attention_heads"] = 16;
  j["num_key_value_heads"] = 4;
  j["sliding_window_size"] = 128;
  j["swa_num_attention_heads"] = 24;  // MiMo-style: layer 2 slides, with 6 kv heads
  j["swa_num_key_value_heads"] = 6;
  j["swa_head_dim"] = 64;
  j["hybrid_layer_pattern"] = {0, 0, 1, 0};
  const model_geometry m = parse(j);
  EXPECT_EQ(to_rank(m, 2).layers[2].num_kv_heads, 3);
  expect_input_error([&] { to_rank(m, 4); }, {"'swa_num_key_value_heads'", "= 6", "tp 4"});
}

TEST(rank, tp_out_of_range) {
  const model_geometry m = load_model(config_path("llama-3-8b.json"));
  for (int64_t tp : {int64_t{0}, int64_t{-2}, max_tp + 1})
    expect_input_error([&] { to_rank(m, tp); }, {"llama-3-8b.json", "'tp'", std::to_string(tp)});
}

TEST(rank, only_attention_layers_reach_a_rank) {
  const model_geometry m = load_model(config_path("nemotron-nas-example.json"));
  const rank_geometry r = to_rank(m, 2);
  ASSERT_EQ(r.layers.size(), 4u);
  for (const rank_layer& l : r.layers) EXPECT_NE(l.kind, attn_kind::none);
}

TEST(rank, unvalidated_geometry_is_rejected_not_divided_by_zero) {
  model_geometry m;
  m.source = "made.json";
  m.num_attention_heads = 8;
  m.num_kv_heads = 0;
  m.head_size = 64;
  m.layers.push_back({"a", attn_kind::full, 8, 0, 64, 64, 0});
  expect_input_error([&] { to_rank(m, 2); }, {"made.json", "'num_key_value_heads'", "= 0"});
}

}  // namespace
}  // namespace headroom::test
