// Reading a JSON file with input_error on every failure: missing or unreadable file (field
// "<file>"), a folder, malformed JSON (field "<json>", the byte and the parser's message).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace headroom {

nlohmann::json read_json_file(const std::string& path);

}  // namespace headroom
