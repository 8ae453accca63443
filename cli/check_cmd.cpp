// headroom check CONFIG.json ...: the whole-model check (docs/design.md command line).
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/engine_flags.hpp"
#include "cli/output_file.hpp"
#include "core/model/loader.hpp"
#include "core/util/error.hpp"

namespace headroom::cli {

int check_main(int argc, char** argv) {
  auto a = parse(argc, argv, command("check"));
  if (a.positional.size() != 1)
    throw input_error(cmdline, "CONFIG.json", std::to_string(a.positional.size()) + " given",
                      "check takes exactly one config file");
  merge_engine_args(a, command("check"));
  check_options o = options_of(a);
  const auto kv_dtype = read_attributed(a, [&] { return dtype_of(a); });
  if (auto v = a.get("--tight")) o.tight = to_double("--tight", *v, 1.0, 1e12);
  if (auto v = a.get("--seed")) o.seed = to_seed("--seed", *v);
  const std::string target = a.get("--target").value_or("model");
  require_fa2_prefill_off_model(o.flashinfer.prefill_sm90, target, cmdline, "--flashinfer-prefill");
  const kv_quant kv_cache = read_attributed(a, [&] { return kv_cache_of(a); }).value_or(kv_quant::none);
  read_attributed(a, [&] {
    require_cache_modelled(kv_cache, a.get("--kv-cache-dtype").value_or(""), target, o.backends, cmdline,
                           "--kv-cache-dtype");
  });
  const auto json_out = a.get("--json");
  std::vector<std::string> inputs = {a.positional[0]};  // --json never writes over one
  if (auto e = a.get("--engine-args")) inputs.push_back(*e);
  if (json_out) check_output("--json", *json_out, inputs);

  model_geometry m = load_model(a.positional[0]);
  if (kv_dtype) m.kv_dtype = *kv_dtype;
  m.kv_cache = kv_cache;
  auto ex = make_executor(target);
  const report r = attributed_to(a.positional[0], [&] {
    const std::vector<check_case> cases = check_cases(m, o);  // run_check's, built once
    require_auto_fa2_off_model(cases, target, cmdline, "--flashinfer-prefill");
    return run_sweep(cases, o.decode_seq_len, o.tight, *ex);
  });
  if (json_out) write_durably(*json_out, to_json(r).dump(2) + "\n");  // before anything is printed
  std::string mutants;
  for (const auto& m : o.mutants) mutants += (mutants.empty() ? ", mutants " : " ") + m;
  print_report(r, "headroom check " + a.positional[0] + " (policy " + to_string(o.pol) + ", grouping " +
                      to_string(o.grp) + mutants + ", target " + target + ")");
  return r.ok ? 0 : 1;
}

}  // namespace headroom::cli
