// headroom verify: a plan file through the checker's own sweep, each (tp, backend) a case whose
// builders are the plan's dumps (the sweep names their buffers as the plan does).
#include <set>

#include "core/check/plan_file.hpp"

namespace headroom {

std::vector<check_case> verify_cases(const plan_file& p) {
  std::vector<check_case> bases;
  for (const auto& r : p.ranks) {
    std::set<backend> backends;
    for (const auto& g : r.groups) backends.insert(g.be);
    for (backend be : backends) {
      check_case base =
          make_case(p.model, r.tp, be, policy::per_layer, grouping::heads, p.hybrid, p.block_size, 0);
      base.engine = p.engine;
      base.flashinfer = p.flashinfer;
      base.layout = p.layout;
      base.builders = r.groups;
      bases.push_back(std::move(base));
    }
  }
  return bases;
}

report run_verify(const plan_file& p, executor& ex, std::optional<double> tight) {
  return run_verify(p, verify_cases(p), ex, tight);
}

report run_verify(const plan_file& p, const std::vector<check_case>& cases, executor& ex,
                  std::optional<double> tight) {
  std::vector<std::string> notes = p.notes;
  for (const auto& r : p.ranks)
    for (const auto& g : r.groups)
      for (const auto& name : unchecked_buffers(g))
        notes.push_back(std::string(to_string(g.be)) + " tp " + std::to_string(r.tp) + " group " +
                        std::to_string(g.index) + ": buffer " + name +
                        " is not checked (no kernel of headroom's reads it)");
  report rep = run_sweep(cases, check_options{}.decode_seq_len, tight, ex);
  rep.notes.insert(rep.notes.begin(), notes.begin(), notes.end());
  return rep;
}

}  // namespace headroom
