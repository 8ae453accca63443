// One attention group: head resolution, plans per batch, runs per distinct layer, verdicts.
#include "core/check/group_check.hpp"

#include <algorithm>
#include <set>

#include "core/check/plan_runs.hpp"
#include "core/util/error.hpp"

namespace headroom {
namespace {

// Keeps the first violation per (invariant, buffer, layer heads) and counts the batches that hit it.
class violation_log {
 public:
  void add(violation v, int64_t heads) {
    auto key = std::make_tuple(v.invariant, v.buffer, heads);
    auto [it, fresh] = index_.emplace(key, out_.size());
    if (fresh) out_.push_back(std::move(v)), hits_.push_back(1);
    else ++hits_[it->second];
  }
  std::vector<violation> take() {
    for (std::size_t i = 0; i < out_.size(); ++i)
      if (hits_[i] > 1) out_[i].detail += " (" + std::to_string(hits_[i]) + " batches fail)";
    return std::move(out_);
  }
 private:
  std::map<std::tuple<std::string, std::string, int64_t>, std::size_t> index_;
  std::vector<violation> out_;
  std::vector<int64_t> hits_;
};

}  // namespace

group_result check_group(const group_context& ctx, const std::vector<batch>& decode_sweep,
                         const std::vector<batch>& extra) {
  group_result res;
  const attention_group& ag = *ctx.ag;
  const backend be = ctx.base.be;
  auto make_violation = [&](const char* inv, const batch& b) {
    violation v;
    v.invariant = inv;
    v.be = be;
    v.tp = ctx.base.tp;
    v.group = ag.index;
    v.layers = ag.layers;
    v.repro = ctx.base;
    v.repro.b = b;
    return v;
  };

  // A case may name the builder's layers itself (a spec-decode drafter whose layer names the
  // target's registry may not hold); otherwise the group's own builder layers.
  const auto& names = ctx.base.builder_names.empty() ? ag.builder_layers : ctx.base.builder_names;
  head_resolution hr = resolve_heads(*ctx.reg, names, ctx.base.pol,
                                     ctx.rg->model_wide_heads);
  const batch& first = decode_sweep.empty() ? extra.front() : decode_sweep.front();
  if (hr.disagreement) {  // the engine's assertion fires: no builder, nothing to size
    auto v = make_violation(inv::group_agreement, first);
    v.detail = hr.message;
    res.violations.push_back(std::move(v));
    return res;
  }

  // Distinct layer geometries: layers of a group share the KV spec and differ in heads only.
  std::vector<const rank_layer*> reps;
  std::set<int64_t> seen;
  int64_t max_heads = 0;
  for (const auto& n : ag.layers) {
    const rank_layer* l = ctx.reg->find(n);
    if (l && seen.insert(l->num_heads).second) reps.push_back(l);
    if (l) max_heads = std::max(max_heads, l->num_heads);
  }
  if (hr.fell_back) {
    if (max_heads > hr.builder_heads) {
      auto v = make_violation(inv::fallback_when_empty, first);
      v.detail = "no layer of the builder was registered; fell back to the model-wide " +
                 std::to_string(hr.builder_heads) + " heads, but the group's layers run with " +
                 std::to_string(max_heads);
      res.violations.push_back(std::move(v));
    } else {
      res.notes.push_back(std::string(to_string(be)) + " tp " + std::to_string(ctx.base.tp) +
                          " group " + std::to_string(ag.index) +
                          ": no registered layer; fell back to the model-wide " +
                          std::to_string(hr.builder_heads) + " heads");
    }
  }

  violation_log log;
  plan_runner runner(ctx, hr.builder_heads);
  std::optional<int64_t> min_fail;
  auto run_batch = [&](const batch& b) {
    bool failed = false;
    for (const rank_layer* l : reps)
      for (auto& f : runner.run(*l, b)) {
        failed = failed || f.is_capacity_failure;
        auto v = make_violation(f.invariant.c_str(), b);
        v.buffer = f.buffer;
        v.capacity_bytes = f.capacity_bytes;
        v.required_bytes = f.required_bytes;
        v.detail = f.detail;
        log.add(std::move(v), l->num_heads);
      }
    return failed;
  };
  for (std::size_t i : runner.sweep_points(decode_sweep, reps))
    if (run_batch(decode_sweep[i]) && !min_fail) min_fail = decode_sweep[i].num_seqs();
  for (const auto& b : extra) run_batch(b);
  for (auto& f : runner.tight_failures()) {
    auto v = make_violation(inv::tight_bound, f.where);
    v.buffer = f.buffer;
    v.capacity_bytes = f.capacity_bytes;
    v.required_bytes = f.required_bytes;
    v.detail = f.detail;
    log.add(std::move(v), 0);
  }
  for (auto& v : log.take()) res.violations.push_back(std::move(v));
  res.thr = threshold{be, ctx.base.tp, ag.index, hr.builder_heads, max_heads, min_fail};
  if (!runner.note().empty()) res.notes.push_back(runner.note());
  return res;
}

}  // namespace headroom
