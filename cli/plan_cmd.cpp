// headroom plan CONFIG.json ...: the mirror's plan in the plan schema (docs/plan-schema.md), as a
// table and, with --json, as a file that `headroom verify` reads.
#include <nlohmann/json.hpp>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/engine_flags.hpp"
#include "cli/output_file.hpp"
#include "core/check/plan_file.hpp"
#include "core/check/sglang_fa3_plan.hpp"
#include "core/model/loader.hpp"

namespace headroom::cli {

int plan_main(int argc, char** argv) {
  auto a = parse(argc, argv, command("plan"));
  if (a.positional.size() != 1)
    throw input_error(cmdline, "CONFIG.json", std::to_string(a.positional.size()) + " given",
                      "plan takes exactly one config file");
  merge_engine_args(a, command("plan"));
  const check_options o = options_of(a);
  const auto kv_dtype = read_attributed(a, [&] { return dtype_of(a); });
  const kv_quant kv_cache = read_attributed(a, [&] { return kv_cache_of(a); }).value_or(kv_quant::none);
  read_attributed(a, [&] {
    require_cache_modelled(kv_cache, a.get("--kv-cache-dtype").value_or(""), "model", o.backends, cmdline,
                           "--kv-cache-dtype");
  });
  const auto json_out = a.get("--json");
  std::vector<std::string> inputs = {a.positional[0]};  // --json never writes over one
  if (auto e = a.get("--engine-args")) inputs.push_back(*e);
  if (json_out) check_output("--json", *json_out, inputs);

  model_geometry m = load_model(a.positional[0]);
  if (kv_dtype) m.kv_dtype = *kv_dtype;
  m.kv_cache = kv_cache;
  const plan_file p = mirror_plan(m, o);
  if (json_out) write_durably(*json_out, to_json(p).dump(2) + "\n");  // before anything is printed
  std::string mutants;
  for (const auto& name : o.mutants) mutants += (mutants.empty() ? ", mutants " : " ") + name;
  // Under the sglang flavour fa3's groups are SGLang's schedule, not vLLM's builder.
  const bool sglang_fa3 = plans_sglang_fa3(o);
  print_plan(sglang_fa3 ? without_backend(p, backend::fa3) : p,
             "headroom plan " + a.positional[0] + " (policy " + to_string(o.pol) + ", grouping " +
                 to_string(o.grp) + mutants + ")");
  if (sglang_fa3) std::fputs(sglang_fa3_plan_text(sglang_fa3_plan(m, o)).c_str(), stdout);
  return 0;
}

}  // namespace headroom::cli
