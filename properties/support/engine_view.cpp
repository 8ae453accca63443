// Engine view, plans and targets for the properties (engine_view.hpp).
#include "properties/support/engine_view.hpp"

#include <map>
#include <set>

#include "targets/sim/sim_executor.hpp"

namespace headroom::props {

head_resolution resolution_of(const check_case& c, const engine& e, const attention_group& g) {
  return resolve_heads(e.reg, g.builder_layers, effective_policy(c), e.rg.model_wide_heads);
}

std::vector<const rank_layer*> layers_of(const engine& e, const attention_group& g) {
  std::vector<const rank_layer*> out;
  std::set<int64_t> seen;
  for (const auto& n : g.layers)
    if (const rank_layer* l = e.reg.find(n); l && seen.insert(l->num_heads).second) out.push_back(l);
  return out;
}

std::vector<planned_part> plans_for(const check_case& c, const engine& e, const attention_group& g,
                                    int64_t builder_heads, const batch& b) {
  return plan_parts(c, e.rg, g, builder_heads, b);
}

std::vector<buffer_need> needs_of(const planned_part& p, const rank_layer& l, dtype out) {
  return model_observation(p.plan, l, p.b, out).touched;
}

std::unique_ptr<executor> make_sim() { return std::make_unique<sim_executor>(); }

bool heterogeneous(const check_case& c) {
  std::map<kv_spec, std::set<int64_t>> heads;
  const rank_geometry rg = to_rank(c.model, c.tp);
  for (const auto& l : rg.layers)
    if (l.kind != attn_kind::none) heads[spec_of(l, c.model.kv_dtype, c.block_size)].insert(l.num_heads);
  for (const auto& [spec, hs] : heads)
    if (hs.size() > 1) return true;
  return false;
}

}  // namespace headroom::props
