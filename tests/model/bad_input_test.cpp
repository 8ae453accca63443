// Every bad-input class of docs/design.md's exit code 2, at the library level: each is an input_error
// whose message names the file, the field as the config spells it, and the value.
#include <gtest/gtest.h>

#include "core/model/loader.hpp"
#include "model_test_util.hpp"

namespace headroom::test {
namespace {

json laguna_like() {
  json j = small_hf();
  j["num_attention_heads_per_layer"] = {48, 64, 64, 64};
  j["num_attention_heads"] = 48;
  j["head_dim"] = 128;
  j["layer_types"] = {"full_attention", "sliding_attention", "sliding_attention", "sliding_attention"};
  j["sliding_window"] = 512;
  return j;
}

TEST(bad_input, laguna_like_is_valid) { EXPECT_EQ(parse(laguna_like()).layers[1].num_heads, 64); }

TEST(bad_input, missing_field) {
  for (const char* key : {"num_attention_heads", "num_hidden_layers"}) {
    json j = small_hf();
    j.erase(key);
    expect_bad(j, key, "(missing)");
  }
  json j = small_hf();
  j.erase("hidden_size");
  expect_bad(j, "hidden_size", "(missing)");  // needed when head_dim is absent
  j = small_hf();
  j["num_attention_heads"] = nullptr;
  expect_bad(j, "num_attention_heads", "(missing)");
}

TEST(bad_input, negative_and_zero) {
  json j = small_hf();
  j["num_key_value_heads"] = -8;
  expect_bad(j, "num_key_value_heads", "-8");
  j = small_hf();
  j["num_hidden_layers"] = 0;
  expect_bad(j, "num_hidden_layers", "0");
  j = small_hf();
  j["num_attention_heads"] = 0;
  expect_bad(j, "num_attention_heads", "0");
  j = small_hf();
  j["head_dim"] = -128;
  expect_bad(j, "head_dim", "-128");
  j = laguna_like();
  j["num_attention_heads_per_layer"][2] = 0;
  expect_bad(j, "num_attention_heads_per_layer[2]", "0");
  j = laguna_like();
  j["sliding_window"] = -1;
  expect_bad(j, "sliding_window", "-1");
}

TEST(bad_input, float_string_bool_for_a_number) {
  json j = small_hf();
  j["head_dim"] = 128.5;
  expect_bad(j, "head_dim", "128.5");
  j = small_hf();
  j["num_hidden_layers"] = 32.0;
  expect_bad(j, "num_hidden_layers", "32.0");
  j = small_hf();
  j["num_attention_heads"] = "32";
  expect_bad(j, "num_attention_heads", "\"32\"");
  j = small_hf();
  j["num_key_value_heads"] = true;
  expect_bad(j, "num_key_value_heads", "true");
  j = laguna_like();
  j["num_attention_heads_per_layer"][1] = "64";
  expect_bad(j, "num_attention_heads_per_layer[1]", "\"64\"");
  j = small_hf();
  j["num_key_value_heads"] = {8};
  expect_bad(j, "num_key_value_heads", "[8]");
}

TEST(bad_input, lists_of_the_wrong_length) {
  json j = laguna_like();
  j["num_attention_heads_per_layer"] = {48, 64, 64};
  const std::string what = expect_bad(j, "num_attention_heads_per_layer", "a list of 3");
  EXPECT_NE(what.find("num_hidden_layers is 4"), std::string::npos) << what;
  j = laguna_like();
  j["layer_types"].push_back("full_attention");
  expect_bad(j, "layer_types", "a list of 5");
  j = laguna_like();
  j["num_attention_heads_per_layer"] = 48;
  expect_bad(j, "num_attention_heads_per_layer", "48");
}

TEST(bad_input, absurd_sizes) {
  json j = small_hf();
  j["num_hidden_layers"] = int64_t{1'000'000'000'000};
  expect_bad(j, "num_hidden_layers", "1000000000000");
  j["num_hidden_layers"] = 1e12;  // a float, rejected as such
  expect_bad(j, "num_hidden_layers", "1000000000000.0");
  j = small_hf();
  j["num_attention_heads"] = 1'000'000'000;
  expect_bad(j, "num_attention_heads", "1000000000");
  j = small_hf();
  j["num_key_value_heads"] = uint64_t{18'446'744'073'709'551'615u};
  expect_bad(j, "num_key_value_heads", "18446744073709551615");
  j = small_hf();
  j["num_attention_heads"] = json::parse("123456789012345678901234567890");
  expect_bad(j, "num_attention_heads", "1.2345678901234568e+29");
  j = small_hf();
  j["head_dim"] = 100000;
  expect_bad(j, "head_dim", "100000");
  j = small_hf();
  j["hidden_size"] = int64_t{1} << 40;
  expect_bad(j, "hidden_size", std::to_string(int64_t{1} << 40));
  j = laguna_like();
  j["sliding_window"] = int64_t{1} << 50;
  expect_bad(j, "sliding_window", std::to_string(int64_t{1} << 50));
}

TEST(bad_input, kv_heads_must_divide_heads) {
  json j = small_hf();
  j["num_key_value_heads"] = 6;
  expect_bad(j, "num_key_value_heads", "6");
  j = laguna_like();
  j["num_key_value_heads"] = 16;  // divides 48 and 64
  j["num_attention_heads_per_layer"][3] = 40;
  expect_bad(j, "num_key_value_heads", "16");
}

TEST(bad_input, layer_types_and_windows) {
  json j = laguna_like();
  j["layer_types"][2] = "chunked_attention";
  expect_bad(j, "layer_types[2]", "\"chunked_attention\"");
  j = laguna_like();
  j["layer_types"][2] = 7;
  expect_bad(j, "layer_types[2]", "7");
  j = laguna_like();
  j.erase("sliding_window");
  expect_bad(j, "sliding_window", "(missing)");
  j = laguna_like();
  j["sliding_window"] = 0;
  expect_bad(j, "sliding_window", "0");
  j = small_hf();
  j["use_sliding_window"] = "yes";
  expect_bad(j, "use_sliding_window", "\"yes\"");
}

TEST(bad_input, dtype_and_nesting) {
  json j = small_hf();
  j["torch_dtype"] = "float8_e4m3fn";
  expect_bad(j, "torch_dtype", "\"float8_e4m3fn\"");
  j["torch_dtype"] = 16;
  expect_bad(j, "torch_dtype", "16");
  j = json{{"text_config", "llama"}};
  expect_bad(j, "text_config", "\"llama\"");
}

TEST(bad_input, tp_that_does_not_divide_heads) {
  const model_geometry m = parse(laguna_like());
  expect_input_error([&] { to_rank(m, 3); }, {"test.json", "'num_attention_heads_per_layer[1]'", "= 64"});
  expect_input_error([&] { to_rank(m, 5); }, {"test.json", "'num_attention_heads'", "= 48"});
}

}  // namespace
}  // namespace headroom::test
