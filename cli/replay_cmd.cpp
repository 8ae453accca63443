// headroom replay CASE.json [--target model|sim|gpu]: runs one stored case again.
#include <nlohmann/json.hpp>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "core/util/error.hpp"

namespace headroom::cli {

int replay_main(int argc, char** argv) {
  auto a = parse(argc, argv, 2, {"--target", "--json", "--tight"}, {});
  if (a.positional.size() != 1)
    throw input_error(cmdline, "CASE.json", std::to_string(a.positional.size()) + " given",
                      "replay takes exactly one case file");
  const std::string target = a.get("--target").value_or("model");
  std::optional<double> tight;
  if (auto v = a.get("--tight")) tight = to_double("--tight", *v, 1.0, 1e12);
  const auto json_out = a.get("--json");
  if (json_out) check_output("--json", *json_out, {a.positional[0]});
  const check_case c = load_case(a.positional[0]);
  auto ex = make_executor(target);
  const report r = attributed_to(a.positional[0], [&] { return run_case(c, *ex, tight); });
  if (json_out) write_durably(*json_out, to_json(r).dump(2) + "\n");  // before anything is printed
  print_report(r, "headroom replay " + a.positional[0] + " (" + to_string(c.be) + ", tp " +
                      std::to_string(c.tp) + ", policy " + to_string(c.pol) + ", target " +
                      target + ")");
  return r.ok ? 0 : 1;
}

}  // namespace headroom::cli
