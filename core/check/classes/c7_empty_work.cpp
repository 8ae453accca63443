// C7 (vLLM #51970, #51972; DeepGEMM #353): a layer with a compression ratio (DeepSeek-V4's indexer)
// gives each request seq_len // ratio of work. The FULL decode capture's dummy has seq_len 1 (1 + k
// with speculative tokens), so with ratio 4 every request's work is 0; DeepGEMM's SM90 metadata
// scheduler then reads prefix_sum[B] one past its shared array when B is a multiple of 32 (capture
// sizes are). The fix clamps each request's work to at least 1. The steps: scheduled decode
// batches and the dummy runs of every FULL graph (or the case's step); each runs the mqa_metadata
// body (out_of_bounds on shared:prefix_sum on sim and gpu, buffer_capacity on the formulas).
#include "core/check/classes/classes.hpp"
#include "core/check/step_runs.hpp"

namespace headroom {

void check_c7_empty_work(const class_scope& s, std::vector<class_finding>& out) {
  const check_case& c = s.ctx.base;
  bool compressed = false;
  for (const rank_layer* l : group_layers(s.ctx)) compressed = compressed || l->compress_ratio > 0;
  if (!compressed) return;
  std::vector<step_probe> probes = s.sweep ? decode_probes(c) : case_probes(c);
  if (s.sweep)
    for (auto& p : dummy_probes(c)) probes.push_back(std::move(p));
  const bool unclamped = has_mutant(c.mutants, "empty-work-unclamped");
  auto plans = [&](const step_probe& p, const rank_layer& l) {
    std::vector<planned_part> parts;
    if (l.compress_ratio > 0 && p.st.num_reqs_padded > 0)
      parts.push_back({plan_mqa_meta(compressed_lens(p.st, l.compress_ratio, unclamped)), p.st.b});
    return parts;
  };
  run_probes(
      s, probes, plans, [](const step_probe&) { return std::vector<finding>{}; }, bug_class::c7, out);
}

}  // namespace headroom
