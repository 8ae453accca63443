// C4 (vLLM #53658, #53671; the width of #50302): the persistent block table is [max_num_seqs][width]
// with width = cdiv(max_model_len, block_size) rounded up to 128 tokens. A non-uniform dummy run
// (the FULL warm-up of a capture size under cudagraph_mode full) gives every request seq_len =
// num_tokens; when a capture size exceeds max_model_len the attention kernel reads
// block_table[r][cdiv(seq_len, bs) - 1] past row r: into the next row, or past the tensor on the
// last row (num_reqs = max_num_seqs). The formulas report every request with cdiv(seq_len, bs) >
// width; the Triton body, run on the engine's persistent inputs, observes the read past the table.
// FlashInfer's graphs are never FULL for mixed batches (vLLM lowers `full` for it), so its dummies
// are uniform decode of seq_len 1 + k: FlashInfer is not walked. FA3 has no attention body here:
// formulas only.
#include "core/check/classes/classes.hpp"
#include "core/check/plans.hpp"
#include "core/check/step_runs.hpp"
#include "core/util/checked.hpp"

namespace headroom {
namespace {

std::vector<finding> width_formula(const check_case& c, const attention_group& ag, const step_probe& p) {
  const auto [rows, width] = block_table_of(c, ag);
  if (p.st.num_reqs_padded > rows)  // vLLM #19171: rows past the table
    return {{invariant::buffer_capacity, "block_table", 4 * rows * width, 4 * p.st.num_reqs_padded * width,
             "a dummy run of " + std::to_string(p.st.spec.tokens) + " tokens has " +
                 std::to_string(p.st.num_reqs_padded) + " requests; the block table holds " +
                 std::to_string(rows) + " rows (max_num_seqs " + std::to_string(c.engine.max_num_seqs) +
                 ")"}};
  for (int64_t r = p.st.b.num_seqs() - 1; r >= 0; --r) {  // the last row first: past the tensor
    const int64_t len = p.st.b.seq_lens[static_cast<std::size_t>(r)], need = ceil_div(len, c.block_size);
    if (need <= width) continue;
    const std::string where = r == rows - 1 ? "past the table (the last of max_num_seqs rows)"
                                            : "past its row into row " + std::to_string(r + 1);
    return {{invariant::buffer_capacity, "block_table", 4 * width, 4 * need,
             "request " + std::to_string(r) + " of a dummy run of " + std::to_string(p.st.spec.tokens) +
                 " tokens has seq_len " + std::to_string(len) + " = " + std::to_string(need) + " blocks of " +
                 std::to_string(c.block_size) + ", a block-table row holds " + std::to_string(width) +
                 " (max_model_len " + std::to_string(c.engine.max_model_len) + "): the kernel reads " +
                 where}};
  }
  return {};
}

}  // namespace

void check_c4_block_table(const class_scope& s, std::vector<class_finding>& out) {
  const check_case& c = s.ctx.base;
  if (c.be == backend::flashinfer) return;
  std::vector<step_probe> probes;
  if (s.sweep)
    probes = dummy_probes(c);
  else if (c.step.kind == step_kind::dummy)
    probes = case_probes(c);
  auto plans = [&](const step_probe& p, const rank_layer&) {
    return plan_parts(c, s.ctx.eng->rg, *s.ctx.ag, s.builder_heads, p.st.b);
  };
  run_probes(
      s, probes, plans, [&](const step_probe& p) { return width_formula(c, *s.ctx.ag, p); }, bug_class::c4,
      out);
}

}  // namespace headroom
