// One attention group: head resolution, the batches to run, plans per batch, runs per distinct
// layer, verdicts.
#include "core/check/group_check.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/backends/fi_prefill_sm90.hpp"
#include "core/check/class_checks.hpp"
#include "core/check/classes/classes.hpp"
#include "core/check/plan_runs.hpp"

namespace headroom {
namespace {

// Keeps the first violation per (invariant, buffer, layer heads) and counts the batches that hit it.
class violation_log {
 public:
  void add(violation v, int64_t heads) {
    auto key = std::make_tuple(v.inv, v.buffer, heads);
    auto [it, fresh] = index_.emplace(key, out_.size());
    if (fresh)
      out_.push_back(std::move(v)), hits_.push_back(1);
    else
      ++hits_[it->second];
  }
  std::vector<violation> take() {
    for (std::size_t i = 0; i < out_.size(); ++i)
      if (hits_[i] > 1) out_[i].detail += " (" + std::to_string(hits_[i]) + " batches fail)";
    return std::move(out_);
  }

 private:
  std::map<std::tuple<invariant, std::string, int64_t>, std::size_t> index_;
  std::vector<violation> out_;
  std::vector<int64_t> hits_;
};

// The group's distinct layer geometries (layers of a group share the KV spec and differ in heads
// only) and the largest head count among its layers.
std::vector<const rank_layer*> distinct_layers(const group_context& ctx, int64_t& max_heads) {
  std::vector<const rank_layer*> reps;
  std::set<int64_t> seen;
  max_heads = 0;
  for (const auto& n : ctx.ag->layers) {
    const rank_layer* l = ctx.eng->reg.find(n);
    if (!l) continue;
    if (seen.insert(l->num_heads).second) reps.push_back(l);
    max_heads = std::max(max_heads, l->num_heads);
  }
  return reps;
}

// vLLM's FlashInfer builder plans with one window_left for all its layers and asserts that they
// agree (infer_global_hyperparameters): the message when this group's layers do not.
std::optional<std::string> window_disagreement(const group_context& ctx) {
  const rank_layer* first = nullptr;
  for (const auto& n : ctx.ag->layers) {
    const rank_layer* l = ctx.eng->reg.find(n);
    if (!l) continue;
    if (!first) first = l;
    if (l->sliding_window != first->sliding_window)
      return "FlashInfer's builder needs one window for all its layers: " + first->name + " has " +
             std::to_string(first->sliding_window) + ", " + l->name + " " +
             std::to_string(l->sliding_window) + " (0: none)";
  }
  return std::nullopt;
}

// A finding where it happened, with its replayable case.
violation violation_of(const group_context& ctx, finding f, const batch& b) {
  violation v;
  static_cast<finding&>(v) = std::move(f);
  v.be = ctx.base.be;
  v.tp = ctx.base.tp;
  v.group = ctx.ag->index;
  v.layers = ctx.ag->layers;
  if (ctx.shell && ctx.model) {
    v.shell = *ctx.shell;
    v.model = ctx.model;
  } else {
    set_case(v, ctx.base);
  }
  v.shell.b = b;
  return v;
}

threshold threshold_of(const group_context& ctx, int64_t builder_heads, int64_t layer_heads) {
  threshold t;
  t.be = ctx.base.be;
  t.tp = ctx.base.tp;
  t.group = ctx.ag->index;
  t.builder_heads = builder_heads;
  t.layer_heads = layer_heads;
  return t;
}

// The catalogue's class checks on this group: their findings, and per (class, variable) the
// smallest value that fails. A finding the decode sweep already reported for the group (the same
// invariant, buffer and class: C10's tensor-core decode plan runs in both) is not repeated.
void run_class_checks(const group_context& ctx, int64_t builder_heads, int64_t layer_heads,
                      group_result& res) {
  std::map<std::pair<bug_class, std::string>, int64_t> lowest;
  for (class_check check : class_checks()) {
    std::vector<class_finding> found;
    check({ctx, builder_heads, ctx.whole_model}, found);
    for (auto& cf : found) {
      const bool reported =
          std::any_of(res.violations.begin(), res.violations.end(), [&](const violation& v) {
            return v.inv == cf.f.inv && v.buffer == cf.f.buffer && v.cls == cf.f.cls;
          });
      if (!reported) {
        violation v = violation_of(ctx, finding(cf.f), cf.where);
        v.shell.step = cf.step;
        res.violations.push_back(std::move(v));
      }
      if (cf.variable.empty()) continue;
      auto [it, fresh] = lowest.emplace(std::make_pair(cf.f.cls, cf.variable), cf.value);
      if (!fresh) it->second = std::min(it->second, cf.value);
    }
  }
  for (const auto& [key, value] : lowest) {
    threshold t = threshold_of(ctx, builder_heads, layer_heads);
    t.cls = key.first;
    t.variable = key.second;
    t.min_failing = value;
    res.thresholds.push_back(std::move(t));
  }
}

// A whole-model check on the model target runs a FlashInfer group on the widest eager prefill
// step the engine's limits allow for its prefill wrapper's planner (the simulator and the GPU run
// the shorter batches only): PrefillSM90Plan's int workspace grows with the heads and the query
// tiles (fi_prefill_widest_step), PrefillPlan's with the packed rows (fi_fa2_widest_step).
std::vector<batch> with_widest_prefill(const group_context& ctx, int64_t builder_heads,
                                       const std::vector<batch>& extra) {
  std::vector<batch> steps = extra;
  const check_case& c = ctx.base;
  if (c.be != backend::flashinfer || !ctx.whole_model || ctx.ex->kind() != target_kind::model) return steps;
  const int64_t hd = fi_builder_head_dim(c, ctx.eng->rg, *ctx.ag);
  batch b;
  if (fi_backends_of(c, ctx.eng->rg, *ctx.ag).prefill.fa3) {
    b = fi_prefill_widest_step(c.engine, fi_sm90_cta_tile_q(hd));
  } else {
    b = fi_fa2_widest_step(c.engine,
                           builder_heads / std::max<int64_t>(1, fi_builder_kv_heads(c, ctx.eng->rg, *ctx.ag)),
                           hd, fi_options_of(c, ctx.eng->rg, *ctx.ag));
  }
  if (b.num_seqs() > 0) steps.push_back(std::move(b));
  return steps;
}

}  // namespace

group_result check_group(const group_context& ctx, const decode_sweep& sweep,
                         const std::vector<batch>& extra) {
  group_result res;
  const attention_group& ag = *ctx.ag;
  const backend be = ctx.base.be;
  auto make_violation = [&](finding f, const batch& b) { return violation_of(ctx, std::move(f), b); };

  // A case may name the builder's layers itself (a spec-decode drafter whose layer names the
  // target's registry may not hold); otherwise the group's own builder layers.
  const auto& names = ctx.base.builder_names.empty() ? ag.builder_layers : ctx.base.builder_names;
  head_resolution hr;
  if (const builder_dump* d = dump_of(ctx.base, ag))  // the engine's builder: its own query heads
    hr.builder_heads =
        dumped_parameter(*d, be == backend::flashinfer ? "num_qo_heads" : "num_heads_q", "case", "builders.");
  else
    hr = resolve_heads(ctx.eng->reg, names, effective_policy(ctx.base), ctx.eng->rg.model_wide_heads);
  const batch first = sweep.size() > 0 ? sweep.at(0) : extra.front();
  if (hr.disagreement) {  // the engine's assertion fires: no builder, nothing to size
    res.violations.push_back(
        make_violation({invariant::group_agreement, "", 0, 0, hr.message, bug_class::c1}, first));
    return res;
  }

  if (be == backend::flashinfer)
    if (auto msg = window_disagreement(ctx)) {  // the builder's assertion fires: nothing to size
      res.violations.push_back(make_violation({invariant::group_agreement, "", 0, 0, *msg}, first));
      return res;
    }

  int64_t max_heads = 0;
  const auto reps = distinct_layers(ctx, max_heads);
  const std::string fallback = "no layer of the builder was registered; fell back to the model-wide " +
                               std::to_string(hr.builder_heads) + " heads";
  if (hr.fell_back && max_heads > hr.builder_heads)
    res.violations.push_back(make_violation(
        {invariant::fallback_when_empty, "", 0, 0,
         fallback + ", but the group's layers run with " + std::to_string(max_heads), bug_class::c1},
        first));
  else if (hr.fell_back)
    res.notes.push_back(std::string(to_string(be)) + " tp " + std::to_string(ctx.base.tp) + " group " +
                        std::to_string(ag.index) + ": " + fallback);

  violation_log log;
  plan_runner runner(ctx, hr.builder_heads);
  auto run_batch = [&](const batch& b) {
    bool failed = false;
    for (const rank_layer* l : reps)
      for (auto& f : runner.run(*l, b)) {
        failed = failed || is_capacity_failure(f.inv);
        log.add(make_violation(std::move(f), b), l->num_heads);
      }
    return failed;
  };
  const sweep_selection sel = select_sweep(ctx, hr.builder_heads, sweep, reps);
  std::optional<int64_t> min_fail;
  for (std::size_t i : sel.points) {
    const batch b = sweep.at(i);
    if (run_batch(b) && !min_fail) min_fail = b.num_seqs();
  }
  for (const auto& b : with_widest_prefill(ctx, hr.builder_heads, extra)) run_batch(b);
  for (auto& [f, where] : runner.tight_findings()) log.add(make_violation(std::move(f), where), 0);
  for (auto& v : log.take()) res.violations.push_back(std::move(v));
  threshold t = threshold_of(ctx, hr.builder_heads, max_heads);
  t.min_failing_decode_batch = min_fail;
  res.thresholds.push_back(std::move(t));
  run_class_checks(ctx, hr.builder_heads, max_heads, res);
  if (const std::string why = fa3_schedule_refusal(ctx, hr.builder_heads); !why.empty())
    res.notes.push_back(std::string(to_string(be)) + " tp " + std::to_string(ctx.base.tp) + " group " +
                        std::to_string(ag.index) + ": " + why);
  if (!sel.note.empty()) res.notes.push_back(sel.note);
  return res;
}

}  // namespace headroom
