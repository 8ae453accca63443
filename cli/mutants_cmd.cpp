// headroom mutants [--json OUT.json|-]: every mutant of the catalogue (name, class, sources, the
// invariant that catches it, the wrong formula and the fix), and the shared --mutant and engine
// settings flags of check, fuzz and replay.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/output_file.hpp"

namespace headroom::cli {

mutant_set mutants_of(const parsed_args& a) {
  return make_mutant_set(a.all("--mutant"), cmdline, "--mutant");
}

void read_engine_flags(const parsed_args& a, engine_settings& s) {
  if (auto v = a.get("--max-model-len"))
    s.max_model_len = to_int("--max-model-len", *v, 1, max_settings_model_len);
  if (auto v = a.get("--spec-tokens"))
    s.num_speculative_tokens = to_int("--spec-tokens", *v, 0, max_settings_spec_tokens);
  if (auto v = a.get("--cudagraph-mode")) s.cg_mode = parse_cudagraph_mode(*v, cmdline, "--cudagraph-mode");
  if (auto v = a.get("--head-tile")) s.head_tile = to_int("--head-tile", *v, 0, max_settings_head_tile);
  if (auto v = a.get("--mamba-block-size"))
    s.mamba_block_size = to_int("--mamba-block-size", *v, 0, max_settings_block_size);
  if (auto v = a.get("--extra-group-block-size"))
    s.extra_group_block_size = to_int("--extra-group-block-size", *v, 0, max_settings_block_size);
}

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
