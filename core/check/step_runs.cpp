// Probes of engine steps and their runs (step_runs.hpp).
#include "core/check/step_runs.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "core/check/plan_runs.hpp"

namespace headroom {
namespace {

// A batch of n requests of `q` new tokens each, seq_len tokens long.
batch uniform_batch(int64_t n, int64_t seq_len, int64_t q) {
  batch b = decode_batch(n, seq_len);
  b.query_lens.assign(static_cast<std::size_t>(n), q);
  return b;
}

// The verify batches' length: min(256, max_model_len), at least one verify pass long.
int64_t probe_seq_len(const engine_settings& s) {
  return std::max<int64_t>(std::min<int64_t>(256, s.max_model_len), 1 + s.num_speculative_tokens);
}

// The first finding per (invariant, buffer), with the number of probes that repeat it.
class probe_log {
 public:
  explicit probe_log(std::vector<class_finding>& out) : out_(out), first_(out.size()) {}
  void add(finding f, const step_probe& p, bug_class cls) {
    if (f.cls == bug_class::none) f.cls = cls;
    auto [it, fresh] = index_.emplace(std::make_pair(f.inv, f.buffer), out_.size());
    if (!fresh) {
      ++hits_[it->second];
      return;
    }
    hits_[out_.size()] = 1;
    out_.push_back({std::move(f), p.where, p.st.spec, p.variable, p.value});
  }
  ~probe_log() {
    for (std::size_t i = first_; i < out_.size(); ++i)
      if (hits_[i] > 1) out_[i].f.detail += " (" + std::to_string(hits_[i]) + " steps fail)";
  }

 private:
  std::vector<class_finding>& out_;
  std::size_t first_;
  std::map<std::pair<invariant, std::string>, std::size_t> index_;
  std::map<std::size_t, int64_t> hits_;
};

}  // namespace

step_mutants step_mutants_of(const check_case& c) {
  return {has_mutant(c.mutants, "dummy-num-reqs-tokens"), has_mutant(c.mutants, "dummy-seq-lens-unclamped"),
          has_mutant(c.mutants, "draft-reuses-verify-metadata")};
}

step_probe forward_probe(const check_case& c, const batch& b) {
  step_probe p{forward_step(c.engine, b), b, "tokens", b.num_tokens()};
  if (p.st.uniform_decode) p.variable = "decode_batch", p.value = b.num_seqs();
  return p;
}

step_probe dummy_probe(const check_case& c, const step_spec& spec) {
  step_probe p{realise_step(c.engine, spec, c.b, step_mutants_of(c)), {}, "capture_size", spec.tokens};
  p.where = p.st.b;  // the dummy's requests, as many as a scheduled step may hold
  const auto keep = static_cast<std::size_t>(std::min(p.where.num_seqs(), c.engine.max_num_seqs));
  p.where.seq_lens.resize(keep);
  p.where.query_lens.resize(keep);
  return p;
}

step_probe draft_probe(const check_case& c, const batch& verify, int64_t pass) {
  return {realise_step(c.engine, {step_kind::draft, 0, false, pass}, verify, step_mutants_of(c)), verify,
          "draft_pass", pass};
}

std::vector<step_probe> case_probes(const check_case& c) {
  switch (c.step.kind) {
    case step_kind::dummy:
      return {dummy_probe(c, c.step)};
    case step_kind::draft:
      return {draft_probe(c, c.b, c.step.pass)};
    case step_kind::forward:
      break;
  }
  if (c.b.num_seqs() > c.engine.max_num_seqs) return {};
  return {forward_probe(c, c.b)};
}

std::vector<step_probe> decode_probes(const check_case& c) {
  std::vector<step_probe> out;
  const int64_t q = 1 + c.engine.num_speculative_tokens, len = probe_seq_len(c.engine);
  for (int64_t n = 1; n <= c.engine.max_num_seqs; ++n)
    out.push_back(forward_probe(c, uniform_batch(n, len, q)));
  return out;
}

std::vector<step_probe> dummy_probes(const check_case& c) {
  std::vector<step_probe> out;
  for (const step_spec& s : dummy_steps_of(c.engine)) out.push_back(dummy_probe(c, s));
  return out;
}

std::vector<step_probe> draft_probes(const check_case& c) {
  std::vector<step_probe> out;
  const int64_t k = c.engine.num_speculative_tokens, len = probe_seq_len(c.engine);
  // Pass 0: the capture's one-token draft pass, where FULL graphs are captured (vllm-musa #198).
  const int64_t first = k > 0 && has_full_graphs(c.engine.cg_mode) ? 0 : 1;
  for (int64_t n : std::set<int64_t>{1, c.engine.max_num_seqs})
    for (int64_t pass = first; pass <= k; ++pass)
      out.push_back(draft_probe(c, uniform_batch(n, len, 1 + k), pass));
  std::stable_sort(out.begin(), out.end(),
                   [](const step_probe& a, const step_probe& b) { return a.value < b.value; });
  return out;
}

std::vector<const rank_layer*> group_layers(const group_context& ctx) {
  std::vector<const rank_layer*> out;
  std::set<std::array<int64_t, 6>> seen;
  for (const auto& n : ctx.ag->layers)
    if (const rank_layer* l = ctx.eng->reg.find(n);
        l && seen.insert({l->num_heads, l->num_kv_heads, l->head_size, l->head_size_v,
                          std::max<int64_t>(l->sliding_window, 0), l->compress_ratio})
                 .second)
      out.push_back(l);
  return out;
}

void run_probes(const class_scope& s, const std::vector<step_probe>& probes, const probe_plans& plans,
                const probe_formulas& formulas, bug_class cls, std::vector<class_finding>& out) {
  const group_context& ctx = s.ctx;
  const auto layers = group_layers(ctx);
  const bool exhaustive = ctx.ex->exhaustive();
  model_executor model;
  group_context model_ctx = ctx;
  model_ctx.ex = &model;
  plan_runner target(ctx, s.builder_heads), formula_runner(model_ctx, s.builder_heads);
  // A run's findings of this class; those the runner attributes to another class (a layer's heads
  // or head size against the builder's: C1, C2) are the decode sweep's, found there.
  auto runs = [&](plan_runner& r, const step_probe& p) {
    const engine_step* st = p.st.spec.kind == step_kind::forward && !p.persistent_table ? nullptr : &p.st;
    std::vector<finding> f;
    for (const rank_layer* l : layers)
      for (auto& x : r.run_parts(*l, plans(p, *l), st))
        if (x.cls == bug_class::none || x.cls == cls) f.push_back(std::move(x));
    return f;
  };
  auto cls_of = [&](const step_probe& p) {
    return p.st.num_reqs_padded > ctx.base.engine.max_num_seqs ? bug_class::c3 : cls;
  };
  probe_log log(out);
  std::optional<std::size_t> first_fail;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const step_probe& p = probes[i];
    bool fails = false;
    for (auto& f : formulas(p)) {
      fails = fails || is_capacity_failure(f.inv) || f.inv == invariant::plan_run_shape;
      if (exhaustive || f.inv == invariant::plan_run_shape) log.add(std::move(f), p, cls_of(p));
    }
    if (exhaustive || !first_fail)
      for (auto& f : runs(exhaustive ? target : formula_runner, p)) {
        fails = fails || is_capacity_failure(f.inv);
        if (exhaustive) log.add(std::move(f), p, cls_of(p));
      }
    if (fails && !first_fail) first_fail = i;
  }
  if (exhaustive || probes.empty()) return;
  std::vector<std::size_t> picks = {first_fail.value_or(0)};
  if (first_fail && *first_fail > 0) picks.insert(picks.begin(), *first_fail - 1);
  for (std::size_t i : picks)
    for (auto& f : runs(target, probes[i])) log.add(std::move(f), probes[i], cls_of(probes[i]));
}

}  // namespace headroom
