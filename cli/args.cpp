// Command-line parsing helpers (see args.hpp).
#include "cli/args.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <set>
#include <sstream>

#include "core/util/error.hpp"

namespace headroom::cli {

std::optional<std::string> parsed_args::get(const std::string& f) const {
  auto it = flags.find(f);
  if (it == flags.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> parsed_args::all(const std::string& f) const {
  auto it = lists.find(f);
  return it == lists.end() ? std::vector<std::string>{} : it->second;
}

parsed_args parse(int argc, char** argv, const command_spec& c) {
  parsed_args a;
  for (int i = 2; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--", 0) != 0) {
      a.positional.push_back(s);
      continue;
    }
    std::string value;
    bool inline_value = false;
    if (auto eq = s.find('='); eq != std::string::npos) {
      value = s.substr(eq + 1);
      s = s.substr(0, eq);
      inline_value = true;
    }
    const flag_spec* f = find_flag(c, s);
    if (!f)
      throw input_error(cmdline, s, "(flag)",
                        "unknown flag; see headroom " + std::string(c.name) + " --help");
    if (f->kind == flag_kind::toggle && inline_value)
      throw input_error(cmdline, s, value, "this flag takes no value");
    if (f->kind == flag_kind::toggle) {
      a.flags[s] = "";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) throw input_error(cmdline, s, "(missing)", "this flag takes a value");
      value = argv[++i];
    }
    if (f->kind == flag_kind::repeat) {
      a.lists[s].push_back(value);
    } else {
      if (a.flags.count(s)) throw input_error(cmdline, s, value, "given twice");
      a.flags[s] = value;
    }
  }
  return a;
}

int64_t to_int(const std::string& flag, const std::string& v, int64_t lo, int64_t hi) {
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE)
    throw input_error(cmdline, flag, "\"" + v + "\"", "expected an integer");
  if (x < lo || x > hi)
    throw input_error(cmdline, flag, v, "must be in " + std::to_string(lo) + ".." + std::to_string(hi));
  return x;
}

uint64_t to_seed(const std::string& flag, const std::string& v) {
  errno = 0;
  char* end = nullptr;
  unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || v[0] == '-' || *end != '\0' || errno == ERANGE)
    throw input_error(cmdline, flag, "\"" + v + "\"", "expected a non-negative integer");
  return x;
}

double to_double(const std::string& flag, const std::string& v, double lo, double hi) {
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(x >= lo && x <= hi))
    throw input_error(cmdline, flag, "\"" + v + "\"",
                      "expected a number in " + std::to_string(lo) + ".." + std::to_string(hi));
  return x;
}

std::vector<int64_t> to_int_list(const std::string& flag, const std::string& v, int64_t lo, int64_t hi,
                                 std::size_t max_items) {
  const std::size_t items = static_cast<std::size_t>(std::count(v.begin(), v.end(), ',')) + 1;
  if (items > max_items)
    throw input_error(cmdline, flag, "(" + std::to_string(items) + " values)",
                      "at most " + std::to_string(max_items) + " values");
  std::vector<int64_t> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(to_int(flag, item, lo, hi));
  if (out.empty() || v.back() == ',')
    throw input_error(cmdline, flag, "\"" + v + "\"", "expected a comma-separated list of integers");
  return out;
}

void require_distinct(const std::string& flag, const std::string& v, const std::vector<int64_t>& values) {
  std::set<int64_t> seen;
  for (int64_t x : values)
    if (!seen.insert(x).second) throw input_error(cmdline, flag, v, "repeats " + std::to_string(x));
}

double to_seconds(const std::string& flag, const std::string& v) {
  std::string num = v;
  double scale = 1;
  if (!num.empty() && (num.back() == 's' || num.back() == 'm' || num.back() == 'h')) {
    scale = num.back() == 'h' ? 3600 : num.back() == 'm' ? 60 : 1;
    num.pop_back();
  }
  // Digits with an optional fraction only: strtod would also take hex floats (0x1p-1074), inf,
  // nan, signs and exponents.
  const std::size_t dot = num.find('.');
  const bool digits = !num.empty() && num != "." && std::all_of(num.begin(), num.end(), [](char c) {
    return std::isdigit(c) || c == '.';
  }) && (dot == std::string::npos || num.find('.', dot + 1) == std::string::npos);
  if (!digits)
    throw input_error(cmdline, flag, "\"" + v + "\"", "expected a decimal duration like 60s, 1.5m or 2h");
  const double seconds = to_double(flag, num, 0, 1e7) * scale;
  if (seconds * 1e9 < 0.5)  // the campaign's clock counts nanoseconds
    throw input_error(cmdline, flag, v,
                      seconds == 0 ? "must be more than 0 s" : "must be more than 0 s: it rounds to 0 ns");
  return seconds;
}

}  // namespace headroom::cli
