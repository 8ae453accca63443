// C8 (vllm-musa #198; flashinfer #2801; SGLang #36915): a one-token draft pass of speculative
// decoding that keeps the verify pass's query_start_loc / max_query_len while q holds one row per
// request. The formulas check each pass's metadata against its q (plan_run_shape on every target:
// FlashInfer's run-time check raises): query_start_loc[-1] == q rows, one entry per request plus
// one, max_query_len == the largest difference. The attention bodies, run on the pass's inputs,
// read (and write) q and the output rows past q through query_start (Triton's body on sim and gpu;
// FlashInfer's prefill path, which the mutated metadata selects, has no body here).
#include <algorithm>

#include "core/check/classes/classes.hpp"
#include "core/check/plans.hpp"
#include "core/check/step_runs.hpp"

namespace headroom {
namespace {

std::vector<finding> shape_formula(const step_probe& p) {
  const engine_step& st = p.st;
  int64_t widest = 0;
  for (std::size_t i = 1; i < st.query_start.size(); ++i)
    widest = std::max(widest, st.query_start[i] - st.query_start[i - 1]);
  const bool ok = st.query_start.back() == st.q_rows &&
                  static_cast<int64_t>(st.query_start.size()) == st.num_reqs_padded + 1 &&
                  widest == st.max_query_len;
  if (ok) return {};
  return {{invariant::plan_run_shape, "query_start_loc", 4 * st.q_rows, 4 * st.query_start.back(),
           "draft pass " + std::to_string(st.spec.pass) + " of " + std::to_string(st.num_reqs_padded) +
               " requests: query_start_loc ends at " + std::to_string(st.query_start.back()) +
               " (max_query_len " + std::to_string(st.max_query_len) + ") but q holds " +
               std::to_string(st.q_rows) + " rows"}};
}

}  // namespace

void check_c8_draft_passes(const class_scope& s, std::vector<class_finding>& out) {
  const check_case& c = s.ctx.base;
  std::vector<step_probe> probes;
  if (s.sweep)
    probes = draft_probes(c);
  else if (c.step.kind == step_kind::draft)
    probes = case_probes(c);
  auto plans = [&](const step_probe& p, const rank_layer&) {
    return plan_parts(c, s.ctx.eng->rg, *s.ctx.ag, s.builder_heads, p.st.b);
  };
  run_probes(s, probes, plans, shape_formula, bug_class::c8, out);
}

}  // namespace headroom
