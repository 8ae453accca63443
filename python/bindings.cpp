// See bindings.hpp.
#include "python/bindings.hpp"

#include <memory>

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

check_options check_options_of(const run_options& o) {
  check_options c;
  if (o.tp.empty()) throw input_error(arguments, "tp", "[]", "expected at least one TP size");
  for (int64_t tp : o.tp)
    if (tp < 1 || tp > max_tp)
      throw input_error(arguments, "tp", std::to_string(tp), "must be in 1.." + std::to_string(max_tp));
  c.tps = o.tp;
  if (o.backend == "all")
    c.backends = {backend::triton, backend::flashinfer, backend::fa3};
  else if (!o.backend.empty())
    c.backends = {parse_backend(o.backend, arguments, "backend")};
  c.pol = parse_policy(o.policy, arguments, "policy");
  c.grp = parse_grouping(o.grouping, arguments, "grouping");
  if (o.max_num_seqs < 1 || o.max_num_seqs > max_check_num_seqs)
    throw input_error(arguments, "max_num_seqs", std::to_string(o.max_num_seqs),
                      "must be in 1.." + std::to_string(max_check_num_seqs));
  c.max_num_seqs = o.max_num_seqs;
  c.mutants = make_mutant_set(o.mutants, arguments, "mutants");
  c.hybrid = o.hybrid;
  c.flashinfer.cuda_graph = o.cuda_graph;
  c.seed = o.seed;
  if (o.tight && !(*o.tight >= 1.0))
    throw input_error(arguments, "tight", std::to_string(*o.tight), "must be at least 1");
  c.tight = o.tight;
  return c;
}

nlohmann::json plan(const model_geometry& m, const run_options& o) {
  return to_json(mirror_plan(m, check_options_of(o)));
}

nlohmann::json check(const model_geometry& m, const run_options& o) {
  const check_options c = check_options_of(o);
  auto ex = executor_of(o.target);
  try {
    return to_json(run_check(m, c, *ex));
  } catch (const input_error& e) {
    throw e.in_file(m.source);
  }
}

nlohmann::json verify(const plan_file& p, const std::string& target, std::optional<double> tight) {
  auto ex = executor_of(target);
  if (tight && !(*tight >= 1.0))
    throw input_error(arguments, "tight", std::to_string(*tight), "must be at least 1");
  try {
    return to_json(run_verify(p, *ex, tight));
  } catch (const input_error& e) {
    throw e.in_file(p.model.source);
  }
}

}  // namespace headroom::python
