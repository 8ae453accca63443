// headroom replay FILE [--target model|sim|gpu] [--violation N] [--json OUT.json]: runs a stored
// case again. FILE is a case (a counterexample, a regression) or a report written by --json, whose
// violations are replayed each on its own (or only the N-th), their verdicts merged.
#include <nlohmann/json.hpp>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/engine_flags.hpp"
#include "cli/output_file.hpp"
#include "core/util/error.hpp"
#include "core/util/json_file.hpp"

namespace headroom::cli {

int replay_main(int argc, char** argv) {
  auto a = parse(argc, argv, command("replay"));
  if (a.positional.size() != 1)
    throw input_error(cmdline, "CASE.json", std::to_string(a.positional.size()) + " given",
                      "replay takes exactly one case or report file");
  const std::string target = a.get("--target").value_or("model");
  std::optional<double> tight;
  if (auto v = a.get("--tight")) tight = to_double("--tight", *v, 1.0, 1e12);
  const auto json_out = a.get("--json");
  const std::string& file = a.positional[0];
  if (json_out) check_output("--json", *json_out, {file});
  const nlohmann::json j = read_json_file(file);
  std::vector<check_case> cases;
  if (is_report(j)) {
    cases = cases_from_report(j, file);
    if (auto v = a.get("--violation")) {
      const int64_t n = to_int("--violation", *v, 0, static_cast<int64_t>(cases.size()) - 1);
      cases = {cases[static_cast<std::size_t>(n)]};
    }
  } else {
    if (a.get("--violation"))
      throw input_error(cmdline, "--violation", *a.get("--violation"), "only a report has violations");
    cases.push_back(case_from_json(j, file));
  }
  const mutant_set extra = mutants_of(a);  // switched on in every case, besides the case's own
  for (auto& c : cases) {
    mutant_set all = c.mutants;
    all.insert(all.end(), extra.begin(), extra.end());
    c.mutants = make_mutant_set(all, cmdline, "--mutant");
  }
  for (const auto& c : cases)
    require_cache_modelled(c.model.kv_cache, to_string(c.model.kv_cache), target, {c.be}, file,
                           "kv_cache_dtype");
  for (const auto& c : cases)
    require_fa2_prefill_off_model(c.flashinfer.prefill_sm90 && !c.flashinfer.prefill_auto, target, file,
                                  "flashinfer.prefill_sm90");
  try {  // a case the checker would refuse is refused as run_case would, naming the file
    require_auto_fa2_off_model(cases, target, file, "flashinfer.prefill_auto");
  } catch (const input_error& e) {
    throw e.in_file(file);
  }
  auto ex = make_executor(target);
  report r;
  for (const auto& c : cases) {
    report one = attributed_to(file, [&] { return run_case(c, *ex, tight); });
    for (auto& v : one.violations) r.violations.push_back(std::move(v));
    for (auto& t : one.thresholds) r.thresholds.push_back(t);
    for (auto& n : one.notes) r.notes.push_back(std::move(n));
  }
  r.ok = r.violations.empty();
  if (json_out) write_durably(*json_out, to_json(r).dump(2) + "\n");  // before anything is printed
  std::string title = "headroom replay " + file + " (";
  if (cases.size() == 1)
    title += std::string(to_string(cases[0].be)) + ", tp " + std::to_string(cases[0].tp) + ", policy " +
             to_string(cases[0].pol) + ", ";
  else
    title += std::to_string(cases.size()) + " cases, ";
  print_report(r, title + "target " + target + ")");
  return r.ok ? 0 : 1;
}

}  // namespace headroom::cli
