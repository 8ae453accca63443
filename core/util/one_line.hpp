// How every text that came from outside (a file's content, a path, a flag's value, a parser's
// message) is shown in a message: on one line, with nothing a terminal acts on, and bounded.
// Control characters become escapes (\n, \r, \t, \xNN), and so do bytes that are not valid UTF-8,
// C1 controls and the bidirectional-override code points (\u{202E}); once `max_chars` bytes are
// shown the text is cut and "... (N bytes)" says how long the original was.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace headroom {

inline constexpr std::size_t one_line_max_chars = 200;

std::string one_line(std::string_view s, std::size_t max_chars = one_line_max_chars);

}  // namespace headroom
