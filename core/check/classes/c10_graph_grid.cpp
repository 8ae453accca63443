// C10 (flashinfer #4002; PRs 4016, 4430, 4794; SGLang #31387, #34190): the tensor-core decode path
// (FlashInfer's prefill planner and kernel, one query row per request) under CUDA graphs with
// split-KV disabled. The planner writes work entries only for real (request, q tile) work but pads
// the grid to max(2 * SMs / kv heads, the ragged tile bound), and allocates block_valid_mask only
// for split-KV: the padded blocks read entries no plan wrote. The fix (PR 4430, the mirror's
// default) passes the uniform query length and launches exactly the written entries. Each capture
// size's decode plan runs on the target: the formulas predict the reads of unwritten entries, the
// simulator and the device-checked GPU observe them (uninitialized_read).
#include "core/check/classes/classes.hpp"
#include "core/check/plans.hpp"
#include "core/check/step_runs.hpp"

namespace headroom {

int64_t fi_unmasked_tail(const fi_prefill_plan& p) {
  return p.block_valid_mask.empty() ? std::max<int64_t>(0, p.padded_batch_size - p.new_batch_size) : 0;
}

void check_c10_graph_grid(const class_scope& s, std::vector<class_finding>& out) {
  const check_case& c = s.ctx.base;
  const flashinfer_options& f = c.flashinfer;
  if (c.be != backend::flashinfer || !f.tensor_core_decode || !f.cuda_graph || !f.disable_split_kv) return;
  const fi_wrapper_backends wb = fi_backends_of(c, s.ctx.eng->rg, *s.ctx.ag);
  if (wb.decode.fa3) return;  // PrefillSM90Plan: no padded grid, one work list a CTA
  std::vector<step_probe> probes;
  if (s.sweep) {
    for (int64_t n : capture_sizes_of(c.engine)) {
      step_probe p = forward_probe(c, decode_batch(n, std::min<int64_t>(256, c.engine.max_model_len)));
      p.variable = "capture_size";
      p.value = n;
      probes.push_back(std::move(p));
    }
  } else {
    for (step_probe& p : case_probes(c))
      if (p.st.b.is_decode()) probes.push_back(std::move(p));
  }
  const auto layers = group_layers(s.ctx);
  if (layers.empty()) return;
  const int64_t kv = builder_kv_heads(c, s.ctx.eng->rg, *s.ctx.ag);
  const int64_t d = builder_head_size(c, s.ctx.eng->rg, *s.ctx.ag);
  auto plans = [&](const step_probe& p, const rank_layer& l) {
    if (&l != layers.front()) return std::vector<planned_part>{};  // the plan is the builder's
    return flashinfer_parts(c, s.builder_heads, kv, d, p.st.b, fi_options_of(c, s.ctx.eng->rg, *s.ctx.ag),
                            wb);
  };
  run_probes(
      s, probes, plans, [](const step_probe&) { return std::vector<finding>{}; }, bug_class::c10, out);
}

}  // namespace headroom
