// See bindings.hpp.
#include "python/bindings.hpp"

#include <memory>
#include <vector>

#include "cli/engine_flags.hpp"
#include "cli/options.hpp"
#include "core/model/loader.hpp"
#include "core/util/json_file.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "targets/sim/sim_executor.hpp"

namespace headroom::python {
namespace {

constexpr const char* arguments = "arguments";

std::unique_ptr<executor> executor_of(const std::string& target) {
  if (target == "model") return std::make_unique<model_executor>();
  if (target == "sim") return std::make_unique<sim_executor>();
  if (target == "gpu") return make_gpu_executor();
  throw input_error(arguments, "target", "\"" + target + "\"", "expected model, sim or gpu");
}

}  // namespace

model_geometry config_from_path(const std::string& path) { return load_model(path); }

model_geometry config_from_json(const nlohmann::json& j, const std::string& name) {
  return parse_model(j, name);
}

run_settings settings_of(const run_options& o) {
  cli::parsed_args a;  // the keyword arguments as the command line's flags, reported as themselves
  if (o.tp) {
    if (o.tp->empty()) throw input_error(arguments, "tp", "[]", "expected at least one TP size");
    std::string list;
    for (int64_t tp : *o.tp) list += (list.empty() ? "" : ",") + std::to_string(tp);
    a.flags["--tp"] = list;
    a.origins["--tp"] = {arguments, "tp"};
  }
  cli::merge_keyword_settings(a, o.settings, arguments);
  if (!o.engine_args.is_null())
    cli::merge_engine_args(a, o.engine_args, o.engine_args_name, cli::command("check"));
  run_settings r{cli::options_of(a), cli::read_attributed(a, [&] { return cli::dtype_of(a); }),
                 cli::read_attributed(a, [&] { return cli::kv_cache_of(a); }).value_or(kv_quant::none),
                 a.get("--kv-cache-dtype").value_or("")};
  check_options& c = r.options;
  if (o.backend == "all")
    c.backends = {backend::triton, backend::flashinfer, backend::fa3};
  else if (!o.backend.empty())
    c.backends = {parse_backend(o.backend, arguments, "backend")};
  c.pol = parse_policy(o.policy, arguments, "policy");
  c.grp = parse_grouping(o.grouping, arguments, "grouping");
  c.mutants = make_mutant_set(o.mutants, arguments, "mutants");
  c.hybrid = o.hybrid;
  c.flashinfer.cuda_graph = o.cuda_graph;
  c.seed = o.seed;
  if (o.tight && !(*o.tight >= 1.0))
    throw input_error(arguments, "tight", std::to_string(*o.tight), "must be at least 1");
  c.tight = o.tight;
  return r;
}

namespace {

// The model's dtype and the cache's fp8 format on `m`, after the same refusals as the command line.
void apply_dtypes(model_geometry& m, const run_settings& s, const std::string& target) {
  cli::require_cache_modelled(s.kv_cache, s.kv_cache_given, target, s.options.backends, arguments,
                              "kv_cache_dtype");
  if (s.kv_dtype) m.kv_dtype = *s.kv_dtype;
  m.kv_cache = s.kv_cache;
}

}  // namespace

nlohmann::json plan(model_geometry m, const run_options& o) {
  const run_settings s = settings_of(o);
  apply_dtypes(m, s, "model");
  return to_json(mirror_plan(m, s.options));
}

nlohmann::json check(model_geometry m, const run_options& o) {
  const run_settings s = settings_of(o);
  apply_dtypes(m, s, o.target);
  cli::require_fa2_prefill_off_model(s.options.flashinfer.prefill_sm90, o.target, arguments,
                                     "flashinfer_prefill");
  auto ex = executor_of(o.target);
  try {
    const std::vector<check_case> cases = check_cases(m, s.options);  // run_check's, built once
    cli::require_auto_fa2_off_model(cases, o.target, arguments, "flashinfer_prefill");
    return to_json(run_sweep(cases, s.options.decode_seq_len, s.options.tight, *ex));
  } catch (const input_error& e) {
    throw e.in_file(m.source);
  }
}

nlohmann::json verify(const plan_file& p, const std::string& target, std::optional<double> tight,
                      const std::string& name) {
  auto ex = executor_of(target);
  if (tight && !(*tight >= 1.0))
    throw input_error(arguments, "tight", std::to_string(*tight), "must be at least 1");
  try {
    const std::vector<check_case> cases = cli::refused_or_verify_cases(p, target, name);
    return to_json(run_verify(p, cases, *ex, tight));
  } catch (const input_error& e) {
    throw e.in_file(p.model.source);
  }
}

}  // namespace headroom::python
