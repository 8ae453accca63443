// See one_line.hpp.
#include "core/util/one_line.hpp"

#include <cstdint>
#include <cstdio>

namespace headroom {
namespace {

std::string hex_byte(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return buf;
}

// Length of the valid UTF-8 sequence at s[i] and its code point; 0 when it is not valid
// (overlong forms, surrogates and code points past U+10FFFF included).
std::size_t utf8_sequence(std::string_view s, std::size_t i, uint32_t& cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  uint32_t min = 0;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2, cp = c & 0x1fu, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3, cp = c & 0x0fu, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, cp = c & 0x07u, min = 0x10000;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto t = static_cast<unsigned char>(s[i + k]);
    if ((t & 0xc0u) != 0x80u) return 0;
    cp = (cp << 6) | (t & 0x3fu);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

// Code points a terminal may act on or that reorder the text around them.
bool invisible_control(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

// The next character of s at i, as shown; advances i past it.
std::string next_shown(std::string_view s, std::size_t& i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    ++i;
    switch (c) {
      case '\n':
        return "\\n";
      case '\r':
        return "\\r";
      case '\t':
        return "\\t";
      default:
        return c < 0x20 || c == 0x7f ? hex_byte(c) : std::string(1, static_cast<char>(c));
    }
  }
  uint32_t cp = 0;
  const std::size_t n = utf8_sequence(s, i, cp);
  if (n == 0) {
    ++i;
    return hex_byte(c);
  }
  const std::string_view seq = s.substr(i, n);
  i += n;
  if (!invisible_control(cp)) return std::string(seq);
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\u{%04x}", static_cast<unsigned>(cp));
  return buf;
}

}  // namespace

std::string one_line(std::string_view s, std::size_t max_chars) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (out.size() >= max_chars) return out + "... (" + std::to_string(s.size()) + " bytes)";
    out += next_shown(s, i);
  }
  return out;
}

}  // namespace headroom
