// headroom verify PLAN.json [--target model|sim|gpu] [--json OUT.json] [--tight K]: checks a plan
// from outside (an engine's dump, an edited `headroom plan --json`) with check's sweep, invariants,
// report and exit codes.
#include <nlohmann/json.hpp>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/engine_flags.hpp"
#include "cli/output_file.hpp"
#include "core/check/plan_file.hpp"

namespace headroom::cli {

int verify_main(int argc, char** argv) {
  auto a = parse(argc, argv, command("verify"));
  if (a.positional.size() != 1)
    throw input_error(cmdline, "PLAN.json", std::to_string(a.positional.size()) + " given",
                      "verify takes exactly one plan file");
  const std::string& file = a.positional[0];
  const std::string target = a.get("--target").value_or("model");
  std::optional<double> tight;
  if (auto v = a.get("--tight")) tight = to_double("--tight", *v, 1.0, 1e12);
  const auto json_out = a.get("--json");
  if (json_out) check_output("--json", *json_out, {file});
  const plan_file p = load_plan(file);
  auto ex = make_executor(target);
  const report r = attributed_to(file, [&] {
    const std::vector<check_case> cases = refused_or_verify_cases(p, target, file);
    return run_verify(p, cases, *ex, tight);
  });
  if (json_out) write_durably(*json_out, to_json(r).dump(2) + "\n");  // before anything is printed
  print_report(r, "headroom verify " + file + " (" + p.source + ", target " + target + ")");
  return r.ok ? 0 : 1;
}

}  // namespace headroom::cli
