// The flag tables of the headroom commands: one table per command (flag, kind, metavar, one-line
// help, the engine's own name), consumed by the parser (args.hpp) and by the usage and per-command
// help texts, so that what --help says and what the parser accepts cannot drift apart.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace headroom::cli {

// value: takes one value, once; toggle: takes none; repeat: takes a value and may repeat.
enum class flag_kind { value, toggle, repeat };

struct flag_spec {
  std::string_view name;  // "--tp"
  flag_kind kind = flag_kind::value;
  std::string_view metavar;  // "1,2,4,8"; empty for a toggle
  std::string_view help;     // one line
  std::string_view engine;   // the engine's own name for the setting ("tensor_parallel_size"), or ""
};

struct command_spec {
  std::string_view name;        // "check"
  std::string_view positional;  // "CONFIG.json"; empty when the command takes none
  std::string_view summary;     // what the command does, one line
  std::vector<flag_spec> flags;
  std::vector<std::string_view> notes;  // lines under the command in the overall usage
};

// Every command, in the order the overall usage lists them.
const std::vector<command_spec>& command_specs();
// The command named `name`, or nullptr.
const command_spec* find_command(std::string_view name);
const command_spec& command(std::string_view name);  // one that exists (a bug otherwise)
const flag_spec* find_flag(const command_spec& c, std::string_view flag);

// `headroom --help`: every command's synopsis, generated from the tables.
std::string overall_usage();
// `headroom CMD --help`: the synopsis, the summary and one line per flag.
std::string command_help(const command_spec& c);

}  // namespace headroom::cli
