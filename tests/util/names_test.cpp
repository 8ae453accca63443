// The name tables (core/util/names.hpp): names both ways, and a bad name as one input_error that
// lists the table.
#include <gtest/gtest.h>

#include "core/util/names.hpp"

namespace headroom {
namespace {

enum class colour { red, green, blue, ultraviolet };
constexpr name_table<colour, 3> colours = {
    {{colour::red, "red"}, {colour::green, "green"}, {colour::blue, "blue"}}};

TEST(name_table, reads_both_ways) {
  EXPECT_STREQ(name_in(colours, colour::green), "green");
  EXPECT_STREQ(name_in(colours, colour::ultraviolet), "?");
  EXPECT_STREQ(name_in(colours, colour::ultraviolet, "unknown"), "unknown");
  EXPECT_EQ(find_in(colours, "blue"), colour::blue);
  EXPECT_EQ(find_in(colours, "Blue"), std::nullopt);
  EXPECT_EQ(names_of(colours), "red, green or blue");
  EXPECT_EQ(parse_in(colours, "red", "f.json", "colour"), colour::red);
}

TEST(name_table, a_bad_name_names_file_field_value_and_the_choices) {
  try {
    parse_in(colours, "mauve", "f.json", "layers[2].colour");
    FAIL() << "no error";
  } catch (const input_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("f.json"), std::string::npos) << m;
    EXPECT_NE(m.find("layers[2].colour"), std::string::npos) << m;
    EXPECT_NE(m.find("\"mauve\""), std::string::npos) << m;
    EXPECT_NE(m.find("expected red, green or blue"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace headroom
