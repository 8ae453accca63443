// See plans.hpp.
#include "core/check/plans.hpp"

namespace headroom {

engine make_engine(const check_case& c) {
  engine e;
  e.rg = to_rank(c.model, c.tp);
  e.reg = make_registry(e.rg);
  e.kv_groups = make_kv_cache_groups(e.reg, c.model.kv_dtype, c.block_size, c.hybrid);
  e.groups = make_attention_groups(e.kv_groups, e.reg, c.be, c.grp);
  return e;
}

int64_t builder_kv_heads(const check_case& c, const rank_geometry& rg, const attention_group& ag) {
  const bool from_spec = c.be != backend::triton || c.triton.kv_from_group_spec;
  return from_spec ? ag.spec.num_kv_heads : rg.model_wide_kv_heads;
}

std::vector<planned_part> plan_parts(const check_case& c, const rank_geometry& rg,
                                     const attention_group& ag, int64_t builder_heads,
                                     const batch& b) {
  const int64_t kv = builder_kv_heads(c, rg, ag);
  const int64_t d = ag.spec.head_size;
  if (c.be == backend::triton) return {{plan_triton(builder_heads, kv, d, c.triton), b}};
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
