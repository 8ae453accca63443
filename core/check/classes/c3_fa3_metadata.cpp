// C3 (vLLM #34043, #33841, #23465, #20301, #25490, #19171, #53002): FlashAttention-3's ahead-of-time
// scheduler metadata. For the fa3 backend every step's batch (decode batches padded to their graph,
// the dummy runs of every FULL graph, one eager batch above the largest capture size, one prompt's
// prefill) schedules its metadata into the builder's persistent buffer (buffer_capacity /
// out_of_bounds on scheduler_metadata, query_start_loc, seq_lens) and each layer geometry's run
// recomputes its size and runs on it (plan_run_shape when schedule and run use different split
// counts, when a request is given more splits than out_accum holds, or when the kernel tiles fewer
// query rows than the layer packs). vLLM makes that schedule only for a model whose attention layers
// share one window config (vllm_fa3_aot_window), and never for a draft pass: there FA3 prepares each
// layer's call itself (plan_fa3_in_call), run once per layer geometry. For every backend, a dummy run
// whose metadata has more rows than max_num_seqs (vLLM #19171) overruns the model runner's persistent
// rows. Under the sglang flavour the fa3 backend checks SGLang's own decode schedule instead
// (check_c3_fa3_sglang).
#include <algorithm>
#include <functional>
#include <optional>
#include <string>

#include "core/backends/fa3_sglang.hpp"
#include "core/check/classes/classes.hpp"
#include "core/check/plans.hpp"
#include "core/check/step_runs.hpp"
#include "core/util/checked.hpp"

namespace headroom {

fa3_mutants fa3_mutants_of(const check_case& c) {
  return {has_mutant(c.mutants, "fa3-metadata-old-layout"), has_mutant(c.mutants, "fa3-metadata-no-roundup"),
          has_mutant(c.mutants, "fa3-split-mismatch")};
}

namespace {

// The eager batch just above the largest capture size (#20301's 600 tokens over 512): its tokens
// spread over as many requests as the engine runs.
std::vector<step_probe> eager_probe(const check_case& c) {
  const int64_t top = max_capture_of(c.engine);
  if (top == 0 || top >= c.engine.max_num_batched_tokens) return {};
  const int64_t tokens = top + 1, n = std::min(c.engine.max_num_seqs, tokens);
  batch b;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t q = tokens / n + (i == n - 1 ? tokens % n : 0);
    b.seq_lens.push_back(q);
    b.query_lens.push_back(q);
  }
  return {forward_probe(c, b)};
}

// A chunked prefill's next step: 100 new tokens over 400 keys (a prompt after its first 300-token
// chunk). Its key count lies between FA3's tile widths (5 n-blocks of 96 keys, 4 of 128, and FA3
// never splits 4 or fewer), so a run on other tiles than the schedule's splits otherwise.
std::vector<step_probe> chunk_probe(const check_case& c) {
  if (c.engine.max_model_len < 400 || c.engine.max_num_batched_tokens < 100) return {};
  batch b;
  b.seq_lens = {400};
  b.query_lens = {100};
  return {forward_probe(c, b)};
}

// One prompt's first prefill chunk, at most 512 tokens (the step's token budget and the model's
// length bound it): many query rows in one request, which FA3's kernel tiles as the schedule packed
// them (fa3_rows_never_computed).
std::vector<step_probe> prefill_probe(const check_case& c) {
  const int64_t tokens = std::min({int64_t{512}, c.engine.max_num_batched_tokens, c.engine.max_model_len});
  if (tokens <= 1) return {};
  batch b;
  b.seq_lens = {tokens};
  b.query_lens = {tokens};
  return {forward_probe(c, b)};
}

// The persistent query_start_loc (max_num_seqs + 1 entries) against the step's metadata rows.
std::vector<finding> rows_formula(const check_case& c, const step_probe& p) {
  const int64_t rows = p.st.num_reqs_padded, cap = c.engine.max_num_seqs;
  if (rows <= cap) return {};
  return {{invariant::buffer_capacity, "query_start_loc", 4 * (cap + 1), 4 * (rows + 1),
           "a dummy run of " + std::to_string(p.st.spec.tokens) + " tokens builds metadata for " +
               std::to_string(rows) + " requests; query_start_loc holds max_num_seqs + 1 = " +
               std::to_string(cap + 1) + " entries"}};
}

// A call's geometry; its head size v too when `show_v` or when it differs from the head size.
std::string fa3_geometry_text(int64_t q_heads, int64_t kv_heads, int64_t head_size, int64_t head_size_v = 0,
                              bool show_v = false) {
  const int64_t v = head_size_v > 0 ? head_size_v : head_size;
  return std::to_string(q_heads) + " query heads, " + std::to_string(kv_heads) + " kv heads, head size " +
         std::to_string(head_size) + (show_v || v != head_size ? ", head size v " + std::to_string(v) : "");
}

// What one layer's run of the scheduled metadata finds. mha_fwd recomputes the metadata length
// from its own split count and mask; when the lengths agree the kernel runs on the schedule's
// per-request values: it tiles each request's query as the schedule packed it, so a layer with more
// query heads per kv head loses rows (fa3_rows_never_computed), or its split combine does
// (fa3_rows_never_combined); and it allocates out_accum
// ([num_splits, heads, total_q, dv] floats) for its own count while the tile scheduler takes each
// request's count from the scheduled metadata, so a request given more splits writes past it.
std::vector<finding> fa3_run_findings(const fa3_plan& f, const fa3_group& g, const rank_layer& l) {
  const bool show_v = fa3_head_size_v(f.run_call) != f.run_call.head_size;  // a DiffKV layer
  const std::string sched = fa3_geometry_text(g.q_heads, g.kv_heads, g.head_size,
                                              fa3_head_size_v(f.sched_call), show_v),
                    layer =
                        fa3_geometry_text(l.num_heads, l.num_kv_heads, l.head_size, l.head_size_v, show_v);
  if (f.sched.size() != f.run_size)
    return {finding{invariant::plan_run_shape, "scheduler_metadata", 4 * f.sched.size(), 4 * f.run_size,
                    "scheduler metadata for " + std::to_string(f.sched.batch) +
                        " requests was scheduled with " + sched + " and num_splits " +
                        std::to_string(f.sched_splits) + " (" + std::to_string(f.sched_resolved) + " used, " +
                        std::to_string(f.sched.size()) + " entries) but layer " + l.name + " runs with " +
                        layer + " and num_splits " + std::to_string(f.run_splits) + " (" +
                        std::to_string(f.run_resolved) + " used) and expects " + std::to_string(f.run_size) +
                        ": FA3's CHECK_SHAPE fails"}};
  std::vector<finding> out;
  const std::string run = "layer " + l.name + " (" + layer + ")";
  if (const int64_t rows = fa3_rows_never_computed(f, f.run_call); rows > 0)
    out.push_back({invariant::plan_run_shape, "output", 0, 0,
                   "the schedule (" + sched + ") packs each request's query for its " +
                       std::to_string(g.q_heads / std::max<int64_t>(g.kv_heads, 1)) +
                       " query heads per kv head, but " + run + " packs " +
                       std::to_string(l.num_heads / l.num_kv_heads) +
                       ": FA3's kernel tiles the schedule's length and never computes " +
                       std::to_string(rows) + " (token, head) rows (garbage output)"});
  else if (const int64_t lost = fa3_rows_never_combined(f, f.run_call); lost > 0)
    out.push_back({invariant::plan_run_shape, "output", 0, 0,
                   "the schedule (" + sched + ") prepares each request's length for its " +
                       std::to_string(g.q_heads / std::max<int64_t>(g.kv_heads, 1)) +
                       " query heads per kv head, which FA3's split combine tiles, but " + run + " has " +
                       std::to_string(l.num_heads / l.num_kv_heads) + ": the combine never writes " +
                       std::to_string(lost) + " (token, head) rows of its split requests (garbage output)"});
  if (f.run_resolved <= 1 || f.sched_dynamic_max <= f.run_resolved) return out;
  const int64_t total_q = f.query_start.empty() ? 0 : f.query_start.back();
  const int64_t slab = checked_product("fa3 out_accum", l.num_heads, total_q, head_size_v_of(l), 4);
  out.push_back({invariant::plan_run_shape, "out_accum", checked_mul(f.run_resolved, slab),
                 checked_mul(f.sched_dynamic_max, slab),
                 "the schedule (" + sched + ") gives a request " + std::to_string(f.sched_dynamic_max) +
                     " splits (" + std::to_string(f.sched_resolved) + " at most) but " + run + " runs with " +
                     std::to_string(f.run_resolved) +
                     ", and its out_accum holds that many: FA3's split tiles write past it"});
  return out;
}

// The first finding of the runs of each layer geometry (group_layers: one layer each) on plan(g).
std::vector<finding> fa3_layer_findings(const std::vector<const rank_layer*>& layers, const fa3_group& g,
                                        const std::function<fa3_plan(const fa3_group&)>& plan) {
  for (const rank_layer* l : layers) {
    fa3_group run = g;
    run.run_q_heads = l->num_heads, run.run_kv_heads = l->num_kv_heads, run.run_head_size = l->head_size;
    run.run_head_size_v = l->head_size_v;
    if (auto f = fa3_run_findings(plan(run), g, *l); !f.empty()) return f;
  }
  return {};
}

// SGLang's decode graph captures: a uniform dummy of every capture size (k = 0: one request a
// token), whose metadata _init_full_cg_decode_metadata precomputes at sequence length 1.
std::vector<step_probe> sglang_capture_probes(const check_case& c) {
  std::vector<step_probe> out;
  if (!has_full_graphs(c.engine.cg_mode)) return out;
  for (int64_t size : capture_sizes_of(c.engine))
    out.push_back(dummy_probe(c, {step_kind::dummy, size, true, 0}));
  return out;
}

// C3 under the sglang flavour: FlashAttentionBackend precomputes one schedule per decode step with
// the model config's geometry over TP (fa3_sglang.hpp); every layer that is not sliding-window runs
// it (sliding layers pass none and FA3 schedules them itself, so they cannot disagree). Steps that
// precompute nothing (extend, mixed, verify, draft passes; DP attention, prefill CP) plan nothing.
// The vLLM model runner's persistent rows (rows_formula) are not SGLang's and are not checked here.
void check_c3_fa3_sglang(const class_scope& s, std::vector<class_finding>& out) {
  const check_case& c = s.ctx.base;
  const rank_geometry& rg = s.ctx.eng->rg;
  const attention_group& ag = *s.ctx.ag;
  std::vector<const rank_layer*> layers;
  for (const rank_layer* l : group_layers(s.ctx))
    if (l->kind != attn_kind::sliding && l->sliding_window == 0) layers.push_back(l);
  if (layers.empty()) return;
  std::vector<step_probe> probes = s.sweep ? decode_probes(c) : case_probes(c);
  if (s.sweep)
    for (auto& p : sglang_capture_probes(c)) probes.push_back(std::move(p));
  fa3_group g{rg.model_wide_heads, rg.model_wide_kv_heads, rg.head_size, ag.spec.block_size, 0};
  g.e4m3 = c.model.kv_cache == kv_quant::fp8_e4m3;  // SGLang's qkv_dtype: its cache dtype
  auto plans = [&](const step_probe& p, const rank_layer& l) {
    const sglang_fa3_pass pass = sglang_fa3_pass_of(c.engine, p.st);
    if (&l != layers.front() || pass == sglang_fa3_pass::none) return std::vector<planned_part>{};
    return std::vector<planned_part>{{plan_fa3_sglang(c.engine, p.st, pass, g), p.st.b}};
  };
  auto formulas = [&](const step_probe& p) {
    const sglang_fa3_pass pass = sglang_fa3_pass_of(c.engine, p.st);
    if (pass == sglang_fa3_pass::none) return std::vector<finding>{};
    std::vector<finding> f = fa3_layer_findings(
        layers, g, [&](const fa3_group& run) { return plan_fa3_sglang(c.engine, p.st, pass, run); });
    for (finding& x : f) x.detail = std::string("SGLang ") + to_string(pass) + ": " + x.detail;
    return f;
  };
  run_probes(s, probes, plans, formulas, bug_class::c3, out);
}

// vLLM's builder: the query heads it resolves (the group's layers' since #53002; the model's per
// rank at 8e958902 and 6adad087, which the model-wide-heads mutant puts back), the group's kv heads,
// head size and blocks, and the model's one window (vllm_fa3_aot_window; call only when it has one).
// It passes no headdim_v, so FA3 schedules with head size v = head size whatever the layers' v is
// (provenance vllm.fa3.schedule_call).
fa3_group vllm_fa3_group(const group_context& ctx, int64_t builder_heads) {
  const check_case& c = ctx.base;
  const attention_group& ag = *ctx.ag;
  fa3_group g{builder_heads, builder_kv_heads(c, ctx.eng->rg, ag), builder_head_size(c, ctx.eng->rg, ag),
              ag.spec.block_size, vllm_fa3_aot_window(ctx.eng->rg).value_or(0)};
  g.e4m3 = c.model.kv_cache == kv_quant::fp8_e4m3;  // _get_scheduler_metadata: qkv_dtype fp8
  return g;
}

// FA3's get_scheduler_metadata raises unless its query heads are a whole multiple of its kv heads.
bool fa3_refuses(const fa3_group& g) { return g.kv_heads <= 0 || g.q_heads % g.kv_heads != 0; }

// Why mha_fwd raises on layer l's own call, or "" when it runs it.
std::string fa3_call_refusal(const rank_layer& l, bool e4m3) {
  return fa3_mha_fwd_refusal(l.num_heads, l.num_kv_heads, l.head_size, e4m3, l.head_size_v);
}

}  // namespace

std::string fa3_schedule_refusal(const group_context& ctx, int64_t builder_heads) {
  const check_case& c = ctx.base;
  if (c.be != backend::fa3 || c.engine.flavour == engine_flavour::sglang) return {};
  std::string raised;  // the first layer whose own call mha_fwd raises on, scheduled or not
  for (const rank_layer* l : group_layers(ctx))
    if (std::string why = fa3_call_refusal(*l, c.model.kv_cache == kv_quant::fp8_e4m3); !why.empty()) {
      raised = "FA3's mha_fwd raises on layer " + l->name + " (" + why + "), whose calls are not run";
      break;
    }
  if (!vllm_fa3_aot_window(ctx.eng->rg))
    return "vLLM makes no ahead-of-time FA3 schedule (the model's layers have more than one sliding-window "
           "config): FA3 prepares each layer's call itself, which is run per layer geometry; no persistent "
           "scheduler_metadata is checked" +
           (raised.empty() ? "" : "; " + raised);
  const fa3_group g = vllm_fa3_group(ctx, builder_heads);
  if (!fa3_refuses(g)) return raised;
  return "FA3's get_scheduler_metadata refuses vLLM's schedule call (the builder's " +
         std::to_string(g.q_heads) + " query heads per rank over the group's " + std::to_string(g.kv_heads) +
         " kv heads: num_heads % num_heads_k != 0), so vLLM's FA3 backend cannot serve this group; its "
         "metadata is not checked";
}

void check_c3_fa3_metadata(const class_scope& s, std::vector<class_finding>& out) {
  const check_case& c = s.ctx.base;
  if (c.be == backend::fa3 && c.engine.flavour == engine_flavour::sglang) return check_c3_fa3_sglang(s, out);
  std::vector<step_probe> probes = s.sweep ? decode_probes(c) : case_probes(c);
  if (s.sweep) {
    for (auto& p : dummy_probes(c)) probes.push_back(std::move(p));
    for (auto& p : eager_probe(c)) probes.push_back(std::move(p));
  }
  // The other backends' calls are checked for the model runner's persistent rows.
  const auto rows = [&](const step_probe& p) { return rows_formula(c, p); };
  if (c.be != backend::fa3) {
    run_probes(
        s, probes, [](const step_probe&, const rank_layer&) { return std::vector<planned_part>{}; }, rows,
        bug_class::c3, out);
    return;
  }
  const attention_group& ag = *s.ctx.ag;
  const auto layers = group_layers(s.ctx);
  // Without a schedule each layer's call prepares its own metadata: each geometry's layer runs it
  // (group_layers), and the formulas check the persistent rows it reads.
  const bool e4m3 = c.model.kv_cache == kv_quant::fp8_e4m3;
  auto in_call = [&](const step_probe& p, const rank_layer& l) {
    if (!fa3_call_refusal(l, e4m3).empty())
      return std::vector<planned_part>{};  // mha_fwd raises (fa3_schedule_refusal notes it)
    fa3_group own{l.num_heads, l.num_kv_heads, l.head_size, ag.spec.block_size,
                  std::max<int64_t>(l.sliding_window, 0)};
    own.e4m3 = e4m3;
    own.head_size_v = l.head_size_v;
    fa3_plan f = plan_fa3_in_call(c.engine, p.st, own);
    const int64_t metadata = f.buffers.front().capacity_bytes;
    apply_dumped_capacities(c, ag, f.buffers);
    f.buffers.front().capacity_bytes = metadata;  // allocated per call, not the builder's buffer
    return std::vector<planned_part>{{std::move(f), p.st.b}};
  };
  // One prompt's prefill and a chunk after it: scheduled, the rows a layer of another geometry could
  // lose and the tiles a layer's own v gives; in the call, FA3's preparation at those shapes on the
  // targets.
  if (s.sweep) {
    for (auto& p : prefill_probe(c)) probes.push_back(std::move(p));
    for (auto& p : chunk_probe(c)) probes.push_back(std::move(p));
  }
  if (!vllm_fa3_aot_window(s.ctx.eng->rg)) {
    run_probes(s, probes, in_call, rows, bug_class::c3, out);
    return;
  }
  const fa3_group g = vllm_fa3_group(s.ctx, s.builder_heads);
  if (fa3_refuses(g)) return;  // no schedule is made: check_group notes it (fa3_schedule_refusal)
  // A layer whose own call mha_fwd raises on runs nothing (fa3_schedule_refusal notes it).
  std::vector<const rank_layer*> served;
  for (const rank_layer* l : layers)
    if (fa3_call_refusal(*l, e4m3).empty()) served.push_back(l);
  if (served.empty()) return;
  const fa3_mutants m = fa3_mutants_of(c);
  // The drafter builds with fast_build (build_for_drafting), which switches the schedule off: a draft
  // pass's calls prepare themselves, and its formulas are the persistent rows'.
  const auto drafting = [](const step_probe& p) { return p.st.spec.kind == step_kind::draft; };
  auto plans = [&](const step_probe& p, const rank_layer& l) {
    if (drafting(p)) return in_call(p, l);
    if (&l != layers.front()) return std::vector<planned_part>{};  // one schedule per step
    fa3_plan f = plan_fa3(c.engine, p.st, g, m);
    apply_dumped_capacities(c, ag, f.buffers);
    return std::vector<planned_part>{{std::move(f), p.st.b}};
  };
  // Each layer's run recomputes from its own tensors: the first layer of each geometry, the first
  // finding of a step.
  auto formulas = [&](const step_probe& p) {
    if (drafting(p)) return rows(p);
    return fa3_layer_findings(served, g,
                              [&](const fa3_group& run) { return plan_fa3(c.engine, p.st, run, m); });
  };
  run_probes(s, probes, plans, formulas, bug_class::c3, out);
}

}  // namespace headroom
