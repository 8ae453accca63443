// core/util: the message sanitiser (one_line) and the bounded reader (json_file).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/util/json_file.hpp"
#include "core/util/one_line.hpp"

namespace headroom {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const input_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no input_error";
  return "";
}

TEST(one_line, escapes_what_a_terminal_acts_on) {
  EXPECT_EQ(one_line("a\nb\rc\td\x1b[2J\x7f"), "a\\nb\\rc\\td\\x1b[2J\\x7f");
  EXPECT_EQ(one_line("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93");  // valid UTF-8 stays
  EXPECT_EQ(one_line("\xc2\x9b"
                     "31m"),
            "\\u{009b}31m");                                                   // C1 CSI
  EXPECT_EQ(one_line("x\xe2\x80\xaey"), "x\\u{202e}y");                        // right-to-left override
  EXPECT_EQ(one_line("\xff\xc3(\xed\xa0\x80"), "\\xff\\xc3(\\xed\\xa0\\x80");  // not UTF-8
}

TEST(one_line, caps_the_length_and_says_how_long_it_was) {
  EXPECT_EQ(one_line(std::string(200, 'x')), std::string(200, 'x'));
  EXPECT_EQ(one_line(std::string(201, 'x')), std::string(200, 'x') + "... (201 bytes)");
  EXPECT_LE(one_line(std::string(100000, '\n')).size(), 230u);
}

TEST(input_error, every_part_is_one_line) {
  const input_error e("f\n.json", "dt\rype", "\"bf16\nverdict: OK\"", "why\x1b");
  EXPECT_STREQ(e.what(), "f\\n.json: field 'dt\\rype' = \"bf16\\nverdict: OK\": why\\x1b");
  EXPECT_EQ(e.value(), "\"bf16\nverdict: OK\"");  // the raw parts stay available
  EXPECT_EQ(input_error("", "f", "v", "w").in_file("c.json").file(), "c.json");
  EXPECT_EQ(input_error("a.json", "f", "v", "w").in_file("c.json").file(), "a.json");
}

TEST(parse_json_text, numbers_past_a_double_name_their_field) {
  EXPECT_NE(message_of([] {
              parse_json_text(R"({"head_dim": 1e400})", "c.json");
            }).find("c.json: field 'head_dim' = 1e400: number out of range"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              parse_json_text(R"({"model": {"layers": [{"a": 1}, {"b": [2, -1e999]}]}})", "c.json");
            }).find("field 'model.layers[1].b[1]' = -1e999"),
            std::string::npos);
  EXPECT_NE(message_of([] { parse_json_text("1e400", "c.json"); }).find("'<root>'"), std::string::npos);
}

TEST(parse_json_text, builds_what_nlohmann_builds) {
  const std::string text = R"({"a": [1, -2, 3.5, "s", null, true, {}], "b": {"c": []}, "a2": 1e308})";
  EXPECT_EQ(parse_json_text(text, "x"), nlohmann::json::parse(text));
  EXPECT_EQ(parse_json_text(R"({"k": 1, "k": 2})", "x")["k"], 2);  // last duplicate wins, as there
  EXPECT_NE(message_of([] { parse_json_text("{\"a\": 1,}", "x"); }).find("'<json>' = byte"),
            std::string::npos);
}

TEST(parse_json_text, depth_and_value_count_are_bounded) {
  const auto nested = [](int64_t n) { return std::string(n, '[') + std::string(n, ']'); };
  EXPECT_NO_THROW(parse_json_text(nested(max_input_depth), "x"));
  EXPECT_NE(message_of([&] {
              parse_json_text("{\"a\": " + nested(max_input_depth) + "}", "x");
            }).find("field 'a' = [...: nested deeper than 64 levels"),
            std::string::npos);
  std::string many = "[0";
  for (int64_t i = 2; i < max_input_items; ++i) many += ",0";
  EXPECT_NO_THROW(parse_json_text(many + "]", "x"));  // the array and max_input_items - 1 zeros
  EXPECT_NE(message_of([&] { parse_json_text(many + ",0]", "x"); }).find("more than 4194304"),
            std::string::npos);
  std::string keys = "{\"k0\": 0";  // keys count too: an object of 2 M fields is 4 M items
  for (int64_t i = 1; i < max_input_items / 2; ++i) keys += ",\"k" + std::to_string(i) + "\":0";
  EXPECT_NE(message_of([&] { parse_json_text(keys + "}", "x"); }).find("more than 4194304"),
            std::string::npos);
}

TEST(read_json_file, refuses_what_is_not_a_small_regular_file) {
  const auto dir = std::filesystem::temp_directory_path() / "headroom_util_test";
  std::filesystem::create_directories(dir);
  const auto big = (dir / "big.json").string();
  std::ofstream(big).close();
  std::filesystem::resize_file(big, max_input_bytes + 1);
  EXPECT_NE(message_of([&] { read_json_file(big); }).find("limited to 64 MiB"), std::string::npos);
  std::filesystem::resize_file(big, 0);
  EXPECT_NE(message_of([&] { read_json_file(big); }).find("'<json>'"), std::string::npos);
  EXPECT_NE(message_of([] { read_json_file("/dev/null"); }).find("is a device"), std::string::npos);
  EXPECT_NE(message_of([&] { read_json_file(dir.string()); }).find("is a directory"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace headroom
