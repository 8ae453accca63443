// See plans.hpp.
#include "core/check/plans.hpp"

#include <algorithm>

namespace headroom {

policy effective_policy(const check_case& c) {
  return has_mutant(c.mutants, "model-wide-heads") ? policy::model_wide : c.pol;
}

grouping effective_grouping(const check_case& c) {
  if (has_mutant(c.mutants, "legacy-grouping")) return grouping::legacy;
  if (has_mutant(c.mutants, "proposer-first-layer")) return grouping::proposer;
  return c.grp;
}

engine make_engine(const check_case& c) {
  engine e;
  e.rg = to_rank(c.model, c.tp);
  e.reg = make_registry(e.rg);
  e.kv_groups = make_kv_cache_groups(e.reg, c.model.kv_dtype, c.block_size, c.hybrid);
  e.groups = make_attention_groups(e.kv_groups, e.reg, c.be, effective_grouping(c));
  return e;
}

int64_t builder_kv_heads(const check_case& c, const rank_geometry& rg, const attention_group& ag) {
  const bool model_wide = c.be == backend::triton && has_mutant(c.mutants, "triton-model-kv-heads");
  return model_wide ? rg.model_wide_kv_heads : ag.spec.num_kv_heads;
}

int64_t builder_head_size(const check_case& c, const rank_geometry& rg, const attention_group& ag) {
  if (has_mutant(c.mutants, "head-dim-from-hidden") && c.model.hidden_size > 0)
    return std::max<int64_t>(1, c.model.hidden_size / c.model.num_attention_heads);
  const bool model_wide = c.be == backend::triton && has_mutant(c.mutants, "triton-model-head-size");
  return model_wide ? rg.head_size : ag.spec.head_size;
}

std::vector<planned_part> plan_parts(const check_case& c, const rank_geometry& rg,
                                     const attention_group& ag, int64_t builder_heads,
                                     const batch& b) {
  const int64_t kv = builder_kv_heads(c, rg, ag);
  const int64_t d = builder_head_size(c, rg, ag);
  if (c.be == backend::fa3) return {};  // no FA3 attention body: its metadata is class C3's check
  if (c.be == backend::triton) {
    triton_plan p = plan_triton(builder_heads, kv, d, c.triton, c.engine);
    p.int32_offsets = has_mutant(c.mutants, "int32-token-offsets");
    return {{std::move(p), b}};
  }
  batch dec, pre;
  for (std::size_t i = 0; i < b.seq_lens.size(); ++i) {
    batch& to = b.query_lens[i] <= 1 ? dec : pre;
    to.seq_lens.push_back(b.seq_lens[i]);
    to.query_lens.push_back(b.query_lens[i]);
  }
  std::vector<planned_part> parts;
  if (dec.num_seqs() > 0)
    parts.push_back({plan_fi_decode(builder_heads, kv, d, c.model.kv_dtype, dec, c.flashinfer), dec});
  if (pre.num_seqs() > 0)
    parts.push_back({plan_fi_prefill(builder_heads, kv, d, pre, c.flashinfer), pre});
  return parts;
}

}  // namespace headroom
