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

check_options options_of(const parsed_args& a) {
  return read_attributed(a, [&] {
    check_options o;
    if (auto v = a.get("--tp")) {
      o.tps = to_int_list("--tp", *v, 1, max_tp, max_tp_sizes);
      require_distinct("--tp", *v, o.tps);
    }
    if (auto v = a.get("--backend")) {
      if (*v == "all")
        o.backends = {backend::triton, backend::flashinfer, backend::fa3};
      else
        o.backends = {parse_backend(*v, cmdline, "--backend")};
    }
    if (auto v = a.get("--policy")) o.pol = parse_policy(*v, cmdline, "--policy");
    if (auto v = a.get("--grouping")) o.grp = parse_grouping(*v, cmdline, "--grouping");
    if (auto v = a.get("--kv-layout")) o.layout = parse_kv_layout(*v, cmdline, "--kv-layout");
    if (auto v = a.get("--max-num-seqs"))
      o.max_num_seqs = to_int("--max-num-seqs", *v, 1, max_check_num_seqs);
    o.hybrid = !a.has("--no-hybrid");
    o.flashinfer.cuda_graph = a.has("--cuda-graph");
    o.mutants = mutants_of(a);
    read_engine_flags(a, o);
    return o;
  });
}

int check_main(int argc, char** argv) {
  auto a = parse(argc, argv, command("check"));
  if (a.positional.size() != 1)
    throw input_error(cmdline, "CONFIG.json", std::to_string(a.positional.size()) + " given",
                      "check takes exactly one config file");
  merge_engine_args(a);
  check_options o = options_of(a);
  const auto kv_dtype = read_attributed(a, [&] { return dtype_of(a); });
  if (auto v = a.get("--tight")) o.tight = to_double("--tight", *v, 1.0, 1e12);
  if (auto v = a.get("--seed")) o.seed = to_seed("--seed", *v);
  const std::string target = a.get("--target").value_or("model");
  const auto json_out = a.get("--json");
  std::vector<std::string> inputs = {a.positional[0]};  // --json never writes over one
  if (auto e = a.get("--engine-args")) inputs.push_back(*e);
  if (json_out) check_output("--json", *json_out, inputs);

  model_geometry m = load_model(a.positional[0]);
  if (kv_dtype) m.kv_dtype = *kv_dtype;
  auto ex = make_executor(target);
  const report r = attributed_to(a.positional[0], [&] { return run_check(m, o, *ex); });
  if (json_out) write_durably(*json_out, to_json(r).dump(2) + "\n");  // before anything is printed
  std::string mutants;
  for (const auto& m : o.mutants) mutants += (mutants.empty() ? ", mutants " : " ") + m;
  print_report(r, "headroom check " + a.positional[0] + " (policy " + to_string(o.pol) + ", grouping " +
                      to_string(o.grp) + mutants + ", target " + target + ")");
  return r.ok ? 0 : 1;
}

}  // namespace headroom::cli
