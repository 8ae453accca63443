// Helpers shared by the model tests: bundled config paths, a small valid Hugging Face config to
// mutate, and an assertion that a call throws input_error naming a field and a value.
#pragma once

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/model/loader.hpp"
#include "core/util/error.hpp"

namespace headroom::test {

using nlohmann::json;

inline std::string source_path(const std::string& rel) {
  return std::string(HEADROOM_SOURCE_DIR) + "/" + rel;
}

inline std::string config_path(const std::string& name) { return source_path("configs/" + name); }

// A bundled config's JSON, as it is on disk.
inline json read_config(const std::string& name) {
  std::ifstream in(config_path(name));
  return json::parse(in);
}

// Llama-like: 4 layers, 32 heads, 8 kv heads, head size 128.
inline json small_hf() {
  return json{{"architectures", {"LlamaForCausalLM"}},
              {"model_type", "llama"},
              {"hidden_size", 4096},
              {"num_hidden_layers", 4},
              {"num_attention_heads", 32},
              {"num_key_value_heads", 8},
              {"torch_dtype", "bfloat16"}};
}

inline model_geometry parse(const json& j) { return parse_model(j, "test.json"); }

// Runs f, expects input_error, and checks the message names every given piece (file, field,
// value). Returns the message so callers can check more.
inline std::string expect_input_error(const std::function<void()>& f,
                                      const std::vector<std::string>& pieces) {
  try {
    f();
  } catch (const input_error& e) {
    const std::string what = e.what();
    for (const std::string& p : pieces)
      EXPECT_NE(what.find(p), std::string::npos) << "message lacks '" << p << "': " << what;
    return what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected input_error, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected input_error, nothing was thrown";
  return {};
}

// Parses j as test.json and expects an input_error naming test.json, the field and the value.
inline std::string expect_bad(const json& j, const std::string& field, const std::string& value) {
  return expect_input_error([&] { parse(j); }, {"test.json", "'" + field + "'", value});
}

// Writes text to a file under the test's temporary directory and returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace headroom::test
