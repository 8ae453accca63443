// The decode sweep (made one batch at a time) and the choice of the batches the kernels run.
#include <set>

#include "core/check/plan_runs.hpp"

namespace headroom {

decode_sweep decode_sweep::uniform(int64_t max_num_seqs, int64_t seq_len) {
  decode_sweep s;
  s.count_ = max_num_seqs;
  s.seq_len_ = seq_len;
  return s;
}

decode_sweep decode_sweep::of(std::vector<batch> batches) {
  decode_sweep s;
  s.given_ = std::move(batches);
  return s;
}

std::size_t decode_sweep::size() const {
  return given_.empty() ? static_cast<std::size_t>(count_) : given_.size();
}

batch decode_sweep::at(std::size_t i) const {
  return given_.empty() ? decode_batch(static_cast<int64_t>(i) + 1, seq_len_) : given_.at(i);
}

sweep_selection select_sweep(const group_context& ctx, int64_t builder_heads, const decode_sweep& sweep,
                             const std::vector<const rank_layer*>& reps) {
  sweep_selection sel;
  if (ctx.ex->exhaustive() || sweep.size() == 0) {
    for (std::size_t i = 0; i < sweep.size(); ++i) sel.points.push_back(i);
    return sel;
  }
  // Ask the formulas which batches touch plan buffers and where the first failure is.
  model_executor model;
  group_context mctx = ctx;
  mctx.ex = &model;
  plan_runner probe(mctx, builder_heads);
  std::vector<std::size_t> touching;
  std::optional<std::size_t> first_fail;
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    const batch b = sweep.at(i);
    bool touches = false, fails = false;
    for (const rank_layer* l : reps) {
      for (auto& p : probe.plans_for(b)) {
        run_request req{l, ctx.base.model.kv_dtype, ctx.base.block_size, &p.plan, &p.b, 0};
        touches = touches || !model.run(req).touched.empty();
      }
      for (auto& f : probe.run(*l, b)) fails = fails || is_capacity_failure(f.inv);
    }
    if (touches) touching.push_back(i);
    if (fails && !first_fail) first_fail = i;
  }
  std::set<std::size_t> pick;
  if (touching.size() <= target_budget) {
    pick.insert(touching.begin(), touching.end());
  } else {
    for (std::size_t k = 0; k < 6; ++k) pick.insert(touching[k]);
    for (std::size_t k = 0; k < 4; ++k) pick.insert(touching[touching.size() - 1 - k]);
    for (std::size_t k = 0; k < 8; ++k) pick.insert(touching[k * touching.size() / 8]);
  }
  if (first_fail) {
    pick.insert(*first_fail);
    if (*first_fail > 0) pick.insert(*first_fail - 1);
  }
  if (!touching.empty() && touching.back() + 1 < sweep.size()) pick.insert(touching.back() + 1);
  if (pick.empty()) pick.insert(0);
  sel.points.assign(pick.begin(), pick.end());
  sel.note = std::string(ctx.ex->name()) + " ran " + std::to_string(pick.size()) + " of " +
             std::to_string(sweep.size()) + " decode batches for " + to_string(ctx.base.be) + " tp " +
             std::to_string(ctx.base.tp) + " group " + std::to_string(ctx.ag->index) +
             " (every batch that uses the plan's buffers up to " + std::to_string(target_budget) +
             ", the formulas' first failure and its predecessor, and one beyond)";
  return sel;
}

}  // namespace headroom
