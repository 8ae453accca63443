// See json_file.hpp.
#include "core/util/json_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/util/error.hpp"

namespace headroom {
namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// The parser's message without its "[json.exception.parse_error.101] " tag.
std::string parser_message(const nlohmann::json::parse_error& e) {
  std::string what = e.what();
  const auto tag_end = what.find("] ");
  return tag_end == std::string::npos ? what : what.substr(tag_end + 2);
}

}  // namespace

nlohmann::json read_json_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw input_error(path, "<file>", quoted(path), "is a directory, not a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw input_error(path, "<file>", quoted(path),
                      std::string("cannot be opened: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw input_error(path, "<file>", quoted(path), "cannot be read");
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw input_error(path, "<json>", "byte " + std::to_string(e.byte),
                      "malformed JSON: " + parser_message(e));
  }
}

}  // namespace headroom
