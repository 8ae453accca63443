// headroom mutants [--json OUT.json|-]: every mutant of the catalogue (name, class, sources, the
// invariant that catches it, the wrong formula and the fix). The --mutant flag of check, plan, fuzz
// and replay is read by mutants_of (options.hpp).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/output_file.hpp"

namespace headroom::cli {

int mutants_main(int argc, char** argv) {
  auto a = parse(argc, argv, command("mutants"));
  if (!a.positional.empty())
    throw input_error(cmdline, a.positional.front(), "(argument)", "mutants takes no positional arguments");
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : all_mutants())
    list.push_back({{"name", m.name},
                    {"class", to_string(m.cls)},
                    {"class_title", class_title(m.cls)},
                    {"sources", m.sources},
                    {"caught_by", to_string(m.caught_by)},
                    {"wrong", m.wrong},
                    {"right", m.right}});
  const auto json_out = a.get("--json");
  if (json_out && *json_out == "-") {
    std::printf("%s\n", list.dump(2).c_str());
    return 0;
  }
  if (json_out) {
    check_output("--json", *json_out, {});
    write_durably(*json_out, list.dump(2) + "\n");
  }
  for (const auto& m : all_mutants()) {
    std::printf("%-28s %-4s caught by %-16s %s\n", std::string(m.name).c_str(), to_string(m.cls),
                to_string(m.caught_by), std::string(m.sources).c_str());
    std::printf("    wrong: %s\n    right: %s\n", std::string(m.wrong).c_str(), std::string(m.right).c_str());
  }
  return 0;
}

}  // namespace headroom::cli
