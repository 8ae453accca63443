// C6 (SGLang #20389, #9344; fla #1080): a Triton-style kernel computing token * stride into q and
// the output in 32-bit integers wraps once an offset passes 2^31 - 1. vLLM's q is a view of the
// fused qkv projection (stride (H_q + H_kv) * D + H_kv * D_v a token), so q's offsets wrap before
// the contiguous output's. The steps: the largest one the scheduler makes (max_num_batched_tokens
// tokens) or the case's own. The offset probe evaluates the Triton body's own offset expression
// for the last element of q or the output, whichever ends further (index_overflow on every target:
// the formulas compare the largest offset with 2^31 - 1, the simulator and the device-checked
// build count the wrap); the fixed kernels compute it in 64 bits.
#include "core/check/classes/classes.hpp"
#include "core/check/step_runs.hpp"

namespace headroom {

void check_c6_int32_offsets(const class_scope& s, std::vector<class_finding>& out) {
  const check_case& c = s.ctx.base;
  if (c.be != backend::triton) return;
  std::vector<step_probe> probes = case_probes(c);
  if (s.sweep) {
    const int64_t t = c.engine.max_num_batched_tokens;
    probes = {forward_probe(c, batch{{t}, {t}})};
  }
  const bool int32 = has_mutant(c.mutants, "int32-token-offsets");
  auto plans = [&](const step_probe& p, const rank_layer&) {
    return std::vector<planned_part>{{plan_offset_probe(p.st.q_rows, int32, true), p.st.b}};
  };
  run_probes(
      s, probes, plans, [](const step_probe&) { return std::vector<finding>{}; }, bug_class::c6, out);
}

}  // namespace headroom
