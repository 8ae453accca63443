// Command-line parsing for the headroom subcommands. Every bad flag or value throws input_error
// with file "command line", the flag as the field and the value, so the CLI exits 2 with one line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/flags.hpp"
#include "core/util/error.hpp"

namespace headroom::cli {

// Where a value read from a file (--engine-args) came from: the file and its key.
struct value_origin {
  std::string file, key;
};

struct parsed_args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> flags;               // "--tp" -> "1,2"; toggles map to ""
  std::map<std::string, std::vector<std::string>> lists;  // repeatable flags, every value in order
  std::map<std::string, value_origin> origins;            // flags whose value a file gave
  bool has(const std::string& f) const { return flags.count(f) != 0; }
  std::optional<std::string> get(const std::string& f) const;
  std::vector<std::string> all(const std::string& f) const;
};

// The arguments from argv[2] on, against the command's flag table (flags.hpp): a value flag takes
// a value once, a repeat flag may repeat, a toggle takes none; anything else is a usage error.
parsed_args parse(int argc, char** argv, const command_spec& c);

// Runs read(): an input_error naming a flag whose value came from a file is re-attributed to that
// file and key, so a bad value is reported where it was written.
template <class Read>
auto read_attributed(const parsed_args& a, Read&& read);

int64_t to_int(const std::string& flag, const std::string& v, int64_t lo, int64_t hi);
uint64_t to_seed(const std::string& flag, const std::string& v);
double to_double(const std::string& flag, const std::string& v, double lo, double hi);
// At most max_items comma-separated integers in lo..hi; a longer list is refused before any of
// it is read.
std::vector<int64_t> to_int_list(const std::string& flag, const std::string& v, int64_t lo, int64_t hi,
                                 std::size_t max_items);
// Throws input_error naming the first value of `values` (the list `v` of `flag`) given twice.
void require_distinct(const std::string& flag, const std::string& v, const std::vector<int64_t>& values);
// A duration: a decimal number (digits, an optional fraction; no sign, exponent, hex, inf or nan)
// and an optional unit s, m or h; one that rounds to 0 ns (the campaign clock's unit) is refused.
double to_seconds(const std::string& flag, const std::string& v);

inline constexpr const char* cmdline = "command line";

template <class Read>
auto read_attributed(const parsed_args& a, Read&& read) {
  try {
    return read();
  } catch (const input_error& e) {
    auto it = a.origins.find(e.field());
    if (e.file() != cmdline || it == a.origins.end()) throw;
    throw input_error(it->second.file, it->second.key, e.value(), e.why());
  }
}

}  // namespace headroom::cli
