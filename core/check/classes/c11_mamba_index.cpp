// C11 (vLLM #53142, #55600, #55507): on a hybrid model the Mamba state of a request resumed at n
// computed tokens is seeded from column (n - 1) // block_size of the Mamba group's block table.
// The right block size is the Mamba group's own; the bug divides by cache_config.block_size, which
// vLLM lowers to the smallest block size over all KV-cache groups (a drafter's, a ring buffer's).
// A column at or past the table's width reads past the row (buffer_capacity: an illegal address);
// a column inside it but not the right one restores another block's state (block_unit: silently
// wrong). Formula level: headroom mirrors the index, not the Mamba kernels.
#include "core/check/classes/classes.hpp"
#include "core/engine/mamba_group.hpp"

namespace headroom {

namespace {

constexpr int64_t table_entry_bytes = 4;  // int32 block ids

// The finding for a resume at n computed tokens, if its column is wrong.
std::optional<class_finding> resume_finding(const class_scope& s, const mamba_group& g, int64_t used,
                                            int64_t n, const batch& b) {
  const int64_t col = state_column(n, used), right = state_column(n, g.block_size);
  if (col == right) return std::nullopt;
  const bool past = col >= g.table_width;
  const std::string what =
      "a resume at " + std::to_string(n) + " computed tokens seeds the Mamba state from column (n - 1) // " +
      std::to_string(used) + " = " + std::to_string(col) + " of a " + std::to_string(g.table_width) +
      "-column block table; the Mamba group's own block size " + std::to_string(g.block_size) + " gives " +
      std::to_string(right) + (past ? " (read past the row)" : " (another block's state, silently)");
  const finding f{past ? invariant::buffer_capacity : invariant::block_unit,
                  "mamba_block_table",
                  past ? g.table_width * table_entry_bytes : 0,
                  past ? (col + 1) * table_entry_bytes : 0,
                  what,
                  bug_class::c11};
  return class_finding{f, b, s.ctx.base.step, "num_computed_tokens", n};
}

}  // namespace

void check_c11_mamba_index(const class_scope& s, std::vector<class_finding>& out) {
  const check_case& c = s.ctx.base;
  if (s.ctx.ag->index != 0) return;  // one Mamba group per model: checked beside the first group
  const auto g = make_mamba_group(c.model, c.engine, c.block_size);
  if (!g) return;
  const int64_t used =
      has_mutant(c.mutants, "mamba-index-min-block-size") ? g->cache_block_size : g->block_size;
  if (!s.sweep) {  // the case's requests, each resumed at seq_len - query_len computed tokens
    for (std::size_t i = 0; i < c.b.seq_lens.size(); ++i)
      if (const int64_t n = c.b.seq_lens[i] - c.b.query_lens[i]; n >= 1)
        if (auto f = resume_finding(s, *g, used, n, c.b)) out.push_back(std::move(*f));
    return;
  }
  // Resumes at n = 1 .. max_model_len - 1 computed tokens, one per column the used block size
  // gives (columns change only there): the first wrong column inside the row and the first past it.
  bool inside = false, past = false;
  for (int64_t n = 1; n < c.engine.max_model_len && !(inside && past); n += used) {
    auto f = resume_finding(s, *g, used, n, decode_batch(1, n + 1));
    if (!f) continue;
    bool& seen = f->f.inv == invariant::block_unit ? inside : past;
    if (!seen) out.push_back(std::move(*f));
    seen = true;
  }
}

}  // namespace headroom
