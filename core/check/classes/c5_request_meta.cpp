// C5 (SGLang #25124, #40668; vllm-ascend #16168): the FlashInfer builder's persistent per-request
// buffers (paged_kv_indptr, paged_kv_last_page_len) against the largest padded batch of every
// padding path: scheduled decode batches (graph replays and eager steps), the dummy runs of every
// FULL graph (their eager warm-up and their capture) and, for SGLang, the eager warm-up at the
// request pool's size. Each padded batch is filled by the request_meta body (out_of_bounds past
// the buffers on sim and gpu, buffer_capacity on the formulas).
#include "core/check/classes/classes.hpp"
#include "core/check/plans.hpp"
#include "core/check/step_runs.hpp"

namespace headroom {

request_meta_mutants request_mutants_of(const check_case& c) {
  return {has_mutant(c.mutants, "request-meta-from-pool"),
          has_mutant(c.mutants, "request-meta-graph-ceiling"),
          has_mutant(c.mutants, "request-meta-max-num-seqs")};
}

void check_c5_request_meta(const class_scope& s, std::vector<class_finding>& out) {
  const check_case& c = s.ctx.base;
  if (c.be != backend::flashinfer) return;
  std::vector<step_probe> probes = s.sweep ? decode_probes(c) : case_probes(c);
  if (s.sweep) {
    std::vector<step_spec> dummies = dummy_steps_of(c.engine);
    if (c.engine.flavour == engine_flavour::sglang)  // SGLang warms up eagerly at the pool's size
      dummies.push_back(
          {step_kind::dummy, std::min(request_pool_of(c.engine), c.engine.max_num_batched_tokens), true, 0});
    for (const auto& d : dummies) probes.push_back(dummy_probe(c, d));
  }
  const auto layers = group_layers(s.ctx);
  if (layers.empty()) return;
  const request_meta_mutants m = request_mutants_of(c);
  auto plans = [&](const step_probe& p, const rank_layer& l) {
    std::vector<planned_part> parts;
    if (&l != layers.front()) return parts;  // one builder per group, whatever the layers' heads
    for (int64_t padded : request_meta_batches(c.engine, p.st)) {
      request_meta_plan r = plan_request_meta(c.engine, p.st, padded, c.flashinfer.page_size, m);
      apply_dumped_capacities(c, *s.ctx.ag, r.buffers);
      parts.push_back({std::move(r), p.st.b});
    }
    return parts;
  };
  run_probes(
      s, probes, plans, [](const step_probe&) { return std::vector<finding>{}; }, bug_class::c5, out);
}

}  // namespace headroom
