// The one reader of every input file (configs, cases, counterexamples): bounded and checked, so
// that whatever a path names and whatever a file holds, the answer is a document or an input_error
// naming the file, the field and the value.
//   the file:  a regular file only (a FIFO is opened without blocking and refused, so are devices
//              and folders), at most max_input_bytes, read once;
//   the JSON:  at most max_input_items values and keys, nested at most max_input_depth deep; malformed JSON
//              names the field "<json>" with the byte and the parser's message; a number past the
//              double range (1e400) names its field ("head_dim", "model.layers[2].head_size") as
//              out of range.
// The limits are far above any real input (a case of max_layers layers in the explicit form is
// about 25 MB and 1.5 M values and keys) and bound what a hostile file costs before it is refused
// (measured: at most about 0.5 GB and 1.3 s; docs/reliability.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"

namespace headroom {

inline constexpr int64_t max_input_bytes = int64_t{64} << 20;  // 64 MiB
inline constexpr int64_t max_input_items = int64_t{4} << 20;   // values (of any type) and keys
inline constexpr int64_t max_input_depth = 64;

nlohmann::json read_json_file(const std::string& path);

// The JSON part of read_json_file for text already in memory; `file` names messages.
nlohmann::json parse_json_text(std::string_view text, const std::string& file);

// Runs read(document) on the file's document. A JSON library exception that escapes read (a bug:
// every read is meant to be checked) still becomes an input_error naming the file.
template <class Read>
auto read_json_input(const std::string& path, Read&& read) {
  const nlohmann::json j = read_json_file(path);
  try {
    return read(j);
  } catch (const nlohmann::json::exception& e) {
    throw input_error(path, "<json>", "(unchecked value)", e.what());
  }
}

}  // namespace headroom
