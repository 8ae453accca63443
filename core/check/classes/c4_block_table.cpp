// C4 (vLLM #53658, #53671; the width of #50302): the persistent block table is [max_num_seqs][width]
// with width = cdiv(max_model_len, block_size) rounded up to 128 tokens. A non-uniform dummy run
// (the FULL warm-up of a capture size under cudagraph_mode full) gives every request seq_len =
// num_tokens; when a capture size exceeds max_model_len the attention kernel reads
// block_table[r][cdiv(seq_len, bs) - 1] past row r: into the next row, or past the tensor on the
// last row (num_reqs = max_num_seqs). The formulas report every request with cdiv(seq_len, bs) >
// width; the Triton body, run on the engine's persistent inputs, observes the read past the table.
// A table of its own shape (an engine's dump given to verify) is also walked with scheduled
// steps: a table narrower than cdiv(max_model_len, bs) fails at the first request one token longer
// than a row holds (put in the last row: the read leaves the tensor), one with fewer rows than
// max_num_seqs at the first decode batch whose requests it cannot hold.
// FlashInfer's graphs are never FULL for mixed batches (vLLM lowers `full` for it), so its dummies
// are uniform decode of seq_len 1 + k: FlashInfer is not walked. FA3 has no attention body here:
// formulas only.
#include <algorithm>
#include <string>
#include <vector>

#include "core/backends/batch.hpp"
#include "core/check/classes/classes.hpp"
#include "core/check/plans.hpp"
#include "core/check/step_runs.hpp"
#include "core/util/checked.hpp"

namespace headroom {
namespace {

// "a dummy run of N tokens" or "a scheduled step of N tokens".
std::string step_words(const step_probe& p) {
  const bool dummy = p.st.spec.kind == step_kind::dummy;
  return std::string(dummy ? "a dummy run of " : "a scheduled step of ") +
         std::to_string(dummy ? p.st.spec.tokens : p.st.b.num_tokens()) + " tokens";
}

std::vector<finding> width_formula(const check_case& c, const attention_group& ag, const step_probe& p) {
  const auto [rows, width] = block_table_of(c, ag);
  if (p.st.num_reqs_padded > rows)  // vLLM #19171: rows past the table
    return {{invariant::buffer_capacity, "block_table", 4 * rows * width, 4 * p.st.num_reqs_padded * width,
             step_words(p) + " has " + std::to_string(p.st.num_reqs_padded) +
                 " requests; the block table holds " + std::to_string(rows) + " rows (max_num_seqs " +
                 std::to_string(c.engine.max_num_seqs) + ")"}};
  for (int64_t r = p.st.b.num_seqs() - 1; r >= 0; --r) {  // the last row first: past the tensor
    const int64_t len = p.st.b.seq_lens[static_cast<std::size_t>(r)], need = ceil_div(len, c.block_size);
    if (need <= width) continue;
    const std::string where = r == rows - 1 ? "past the table (the last of max_num_seqs rows)"
                                            : "past its row into row " + std::to_string(r + 1);
    return {{invariant::buffer_capacity, "block_table", 4 * width, 4 * need,
             "request " + std::to_string(r) + " of " + step_words(p) + " has seq_len " + std::to_string(len) +
                 " = " + std::to_string(need) + " blocks of " + std::to_string(c.block_size) +
                 ", a block-table row holds " + std::to_string(width) + " (max_model_len " +
                 std::to_string(c.engine.max_model_len) + "): the kernel reads " + where}};
  }
  return {};
}

// A scheduled step of b on the persistent table.
step_probe table_probe(const check_case& c, const batch& b, const char* variable, int64_t value) {
  step_probe p = forward_probe(c, b);
  p.variable = variable, p.value = value, p.persistent_table = true;
  return p;
}

// Scheduled steps that reach the edge of a table of this shape, when one can (none for the
// planned shape): decode batches up to one past its rows (a graph's padding may reach past the
// rows earlier), and a batch filling its rows whose last request is as long as a row holds, then
// one token longer (the last row: the read past it leaves the tensor).
std::vector<std::vector<step_probe>> table_probes(const check_case& c, const attention_group& ag) {
  const auto [rows, width] = block_table_of(c, ag);
  const int64_t bs = c.block_size, most = c.engine.max_num_seqs;
  std::vector<std::vector<step_probe>> out;
  if (rows < most) {
    auto& walk = out.emplace_back();
    for (int64_t n = 1; n <= rows + 1; ++n)
      walk.push_back(table_probe(c, decode_batch(n, 1), "decode_batch", n));
  }
  if (ceil_div(c.engine.max_model_len, bs) > width) {
    auto& walk = out.emplace_back();
    const int64_t n = std::clamp<int64_t>(rows, 1, most);
    for (const int64_t len : {checked_mul(width, bs, "block table tokens"), width * bs + 1}) {
      batch b = decode_batch(n, 1);
      b.seq_lens.back() = len;
      walk.push_back(table_probe(c, b, "seq_len", len));
    }
  }
  return out;
}

// A replayed step the scheduler can make (at most max_num_seqs requests of at most max_model_len
// tokens: a generated case may hold longer ones, which no engine schedules) that reaches past the
// table's shape.
bool reaches_past_table(const check_case& c, const attention_group& ag) {
  const table_shape table = block_table_of(c, ag);
  const auto& lens = c.b.seq_lens;
  if (c.b.num_seqs() > c.engine.max_num_seqs ||
      std::any_of(lens.begin(), lens.end(), [&](int64_t len) { return len > c.engine.max_model_len; }))
    return false;
  return c.b.num_seqs() > table.rows || std::any_of(lens.begin(), lens.end(), [&](int64_t len) {
           return ceil_div(len, c.block_size) > table.width;
         });
}

}  // namespace

void check_c4_block_table(const class_scope& s, std::vector<class_finding>& out) {
  const check_case& c = s.ctx.base;
  if (c.be == backend::flashinfer) return;
  std::vector<std::vector<step_probe>> walks;
  if (s.sweep) {
    walks = table_probes(c, *s.ctx.ag);
    walks.insert(walks.begin(), dummy_probes(c));
  } else if (c.step.kind == step_kind::dummy) {
    walks.push_back(case_probes(c));
  } else if (c.step.kind == step_kind::forward && reaches_past_table(c, *s.ctx.ag)) {
    walks.push_back(case_probes(c));
    for (auto& p : walks.back()) p.persistent_table = true;
  }
  auto plans = [&](const step_probe& p, const rank_layer&) {
    return plan_parts(c, s.ctx.eng->rg, *s.ctx.ag, s.builder_heads, p.st.b);
  };
  for (const auto& probes : walks)
    run_probes(
        s, probes, plans, [&](const step_probe& p) { return width_formula(c, *s.ctx.ag, p); }, bug_class::c4,
        out);
}

}  // namespace headroom
