// C9 (vLLM #50578, #51088, #51040): MLA decode kernels that need at least `head_tile` (16) query
// heads per rank. A layer with h < tile heads per rank is padded before the kernel and unpadded
// after it. The fix pads q to exactly the tile (appending heads) and keeps o[:, :h]. The old
// helpers handled only divisors of the tile: q repeated tile // h times, h * (tile // h) heads,
// and o[:, ::tile // h], ceil(tile / (tile // h)) rows. For an h that does not divide the tile the
// padded q holds fewer heads than the kernel's tile reads, and the unpadded output has more rows
// than the layer's h-head output. Formula level only: headroom has no MLA kernel body.
#include <set>

#include "core/check/classes/classes.hpp"
#include "core/util/checked.hpp"

namespace headroom {

namespace {

struct padding {
  int64_t padded_heads = 0;  // heads of the padded q
  int64_t output_rows = 0;   // head rows of the unpadded output
};

padding pad_heads(int64_t h, int64_t tile, bool divisors_only) {
  if (!divisors_only) return {tile, h};
  const int64_t repeat = tile / h;
  return {h * repeat, ceil_div(tile, repeat)};
}

class_finding finding_of(const class_scope& s, const batch& b, const std::string& buffer, int64_t holds,
                         int64_t needs, int64_t row_bytes, int64_t h, const std::string& what) {
  const finding f{invariant::buffer_capacity,
                  buffer,
                  checked_product("C9 bytes", holds, row_bytes),
                  checked_product("C9 bytes", needs, row_bytes),
                  what,
                  bug_class::c9};
  return {f, b, s.ctx.base.step, "heads_per_rank", h};
}

}  // namespace

void check_c9_head_pad(const class_scope& s, std::vector<class_finding>& out) {
  const check_case& c = s.ctx.base;
  const int64_t tile = c.engine.head_tile;
  if (tile == 0) return;
  const bool divisors_only = has_mutant(c.mutants, "head-pad-divisors-only");
  const batch b = s.sweep ? decode_batch(1, 256) : c.b;
  const int64_t tokens = b.num_tokens();
  const int64_t elem = dtype_bytes(c.model.kv_dtype);
  std::set<int64_t> seen;
  for (const auto& name : s.ctx.ag->layers) {
    const rank_layer* l = s.ctx.eng->reg.find(name);
    if (!l || l->num_heads >= tile || !seen.insert(l->num_heads).second) continue;
    const int64_t h = l->num_heads;
    const padding p = pad_heads(h, tile, divisors_only);
    const std::string at = " (" + std::to_string(h) + " heads per rank, tile " + std::to_string(tile) + ", " +
                           std::to_string(tokens) + " tokens)";
    if (p.padded_heads < tile)
      out.push_back(finding_of(s, b, "mla_q_padded", tokens * p.padded_heads, tokens * tile,
                               checked_mul(l->head_size, elem), h,
                               "the padded q holds " + std::to_string(p.padded_heads) +
                                   " heads but the kernel's tile reads " + std::to_string(tile) + at));
    if (p.output_rows != h)
      out.push_back(finding_of(s, b, "mla_output", tokens * h, tokens * p.output_rows,
                               checked_mul(l->head_size_v, elem), h,
                               "unpadding leaves " + std::to_string(p.output_rows) +
                                   " head rows for an output of " + std::to_string(h) + at));
  }
}

}  // namespace headroom
