// C10 (flashinfer #4002; PRs 4016, 4430, 4794; SGLang #31387, #34190): the tensor-core decode path
// (FlashInfer's prefill planner, one query row per request) under CUDA graphs with split-KV
// disabled. The planner writes work entries only for real (request, q tile) work but pads the grid
// to max(2 * SMs / kv heads, the ragged tile bound), and allocates block_valid_mask only for
// split-KV: the padded tail reads entries no plan wrote. The fix (PR 4430, the mirror's default)
// passes the uniform query length and launches exactly the written entries. Formula level: the
// plan itself shows it (uninitialized_read); the steps are the capture sizes (or the case's batch).
#include "core/check/classes/classes.hpp"
#include "core/check/plans.hpp"
#include "core/util/checked.hpp"

namespace headroom {

flashinfer_options fi_options_of(const check_case& c) {
  flashinfer_options o = c.flashinfer;
  if (has_mutant(c.mutants, "fi-graph-grid-unwritten")) o.exact_no_split_graph_grid = false;
  return o;
}

int64_t fi_unmasked_tail(const fi_prefill_plan& p) {
  return p.block_valid_mask.empty() ? std::max<int64_t>(0, p.padded_batch_size - p.new_batch_size) : 0;
}

void check_c10_graph_grid(const class_scope& s, std::vector<class_finding>& out) {
  const check_case& c = s.ctx.base;
  if (c.be != backend::flashinfer || !c.flashinfer.cuda_graph || !c.flashinfer.disable_split_kv) return;
  const int64_t kv = builder_kv_heads(c, s.ctx.eng->rg, *s.ctx.ag);
  const int64_t d = builder_head_size(c, s.ctx.eng->rg, *s.ctx.ag);
  std::vector<batch> steps;
  if (s.sweep)
    for (int64_t n : capture_sizes_of(c.engine)) steps.push_back(decode_batch(n, 1024));
  else if (c.b.num_seqs() > 0 && c.b.is_decode())
    steps.push_back(c.b);
  flashinfer_options o = fi_options_of(c);
  for (const batch& b : steps) {
    o.uniform_q_len = o.exact_no_split_graph_grid ? 1 : 0;  // decode.py passes q_len_per_req (PR 4430) or 0
    const fi_prefill_plan p = plan_fi_prefill(s.builder_heads, kv, d, b, o);
    const int64_t tail = fi_unmasked_tail(p);
    if (tail == 0) continue;
    finding f{invariant::uninitialized_read,
              "request_indices",
              checked_mul(p.new_batch_size, 4, "C10 bytes"),
              checked_mul(p.padded_batch_size, 4, "C10 bytes"),
              "C10: the CUDA-graph grid launches " + std::to_string(p.padded_batch_size) + " blocks over " +
                  std::to_string(p.new_batch_size) + " written work entries, with no block_valid_mask (" +
                  std::to_string(b.num_seqs()) + " decode requests, split-KV disabled)",
              bug_class::c10};
    out.push_back({f, b, c.step, "capture_size", b.num_seqs()});
    if (!s.sweep) break;
  }
}

}  // namespace headroom
