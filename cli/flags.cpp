// The usage and per-command help texts, generated from the flag tables (flags.hpp): a synopsis per
// command wrapped at 100 columns, then for `CMD --help` one line per flag.
#include "cli/flags.hpp"

#include <algorithm>

namespace headroom::cli {
namespace {

constexpr std::size_t width = 100;
constexpr const char* exit_codes =
    "exit codes: 0 every invariant holds, 1 a violation was found, 2 bad input or usage\n";

std::string synopsis_item(const flag_spec& f) {
  std::string s = "[";
  s += f.name;
  if (f.kind != flag_kind::toggle) (s += ' ') += f.metavar;
  s += "]";
  if (f.kind == flag_kind::repeat) s += "...";
  return s;
}

// "headroom NAME POSITIONAL [--flag X] ..." wrapped at `width`, continuation lines indented to
// the first flag; every line starts with `indent`.
std::string synopsis(const command_spec& c, const std::string& indent) {
  std::string head = indent + "headroom ";
  head += c.name;
  if (c.positional.empty() && head.size() < indent.size() + 14) head.resize(indent.size() + 14, ' ');
  if (!c.positional.empty()) (head += ' ') += c.positional;
  const std::string cont(indent.size() + 15, ' ');
  std::string out, line = head;
  for (const auto& f : c.flags) {
    const std::string item = synopsis_item(f);
    if (line.size() + 1 + item.size() > width && line.size() > cont.size()) {
      out += line + "\n";
      line = cont + item;
    } else {
      (line += ' ') += item;
    }
  }
  return out + line + "\n";
}

// "  --flag METAVAR   help [engine name]", the help wrapped at `width` and indented to `column`; a
// long flag puts its help on the next line.
std::string flag_line(const flag_spec& f) {
  constexpr std::size_t column = 36;
  std::string line = "  ";
  line += f.name;
  if (f.kind != flag_kind::toggle) (line += ' ') += f.metavar;
  if (f.kind == flag_kind::repeat) line += " (repeatable)";
  std::string text(f.help);
  if (!f.engine.empty()) ((text += " [") += f.engine) += "]";
  std::string out;
  if (line.size() + 2 > column) {
    out = line + "\n";
    line.clear();
  }
  line.resize(column, ' ');
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    if (line.size() > column && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = std::string(column, ' ');
    }
    if (line.size() > column) line += ' ';
    line += word;
    at = end + 1;
  }
  return out + line + "\n";
}

}  // namespace

std::string overall_usage() {
  std::string s = "usage:\n";
  for (const auto& c : command_specs()) {
    s += synopsis(c, "  ");
    for (const auto& n : c.notes) ((s += std::string(17, ' ')) += n) += '\n';
  }
  s += "headroom CMD --help: the command's flags, one line each\n";
  return s + exit_codes;
}

std::string command_help(const command_spec& c) {
  std::string s = "usage:\n" + synopsis(c, "  ") + "\n";
  (s += c.summary) += ".\n";
  for (const auto& n : c.notes) (s += n) += '\n';
  s += "\nflags:\n";
  for (const auto& f : c.flags) s += flag_line(f);
  return s + exit_codes;
}

}  // namespace headroom::cli
