// C2 (vLLM #56996, #54191): Triton's seq_threshold_3D computed from the model-wide kv heads. The
// buffers stay consistent with the threshold, so nothing overflows; but decode batches between
// the two thresholds take the other path (2D where the group's geometry wants the segmented 3D
// kernel, or the reverse) and the 2D grid of a group with few kv heads leaves most SMs idle.
#include <algorithm>

#include "core/check/classes/classes.hpp"
#include "core/check/plans.hpp"

namespace headroom {

void check_c2_path_choice(const class_scope& s, std::vector<class_finding>& out) {
  const check_case& c = s.ctx.base;
  if (c.be != backend::triton) return;
  const attention_group& ag = *s.ctx.ag;
  const int64_t used_kv = builder_kv_heads(c, s.ctx.eng->rg, ag);
  const int64_t used = triton_threshold(used_kv, c.triton, c.engine);
  const int64_t right = triton_threshold(ag.spec.num_kv_heads, c.triton, c.engine);
  if (used == right) return;
  // The smallest decode batch routed differently, and its 2D grid for the group's real geometry.
  const int64_t first = std::min(used, right) + 1;
  const batch b = s.sweep ? decode_batch(first, 256) : c.b;
  rank_layer l;
  l.num_heads = s.builder_heads > 0 ? s.builder_heads : ag.spec.num_kv_heads;
  l.num_kv_heads = ag.spec.num_kv_heads;
  const triton_shape sh = triton_launch_shape(l, decode_batch(first, 1));
  class_finding f;
  f.f = {invariant::path_choice,
         "",
         0,
         0,
         "seq_threshold_3D is " + std::to_string(used) + " (from " + std::to_string(used_kv) +
             " kv heads) but the group's own " + std::to_string(ag.spec.num_kv_heads) + " kv heads give " +
             std::to_string(right) + ": decode batches " + std::to_string(first) + ".." +
             std::to_string(std::max(used, right)) + " take the " +
             (used < right ? "2D path (grid " + std::to_string(sh.grid_x * sh.grid_y) + " blocks at " +
                                 std::to_string(first) + " requests)"
                           : "3D path") +
             " instead of the " + (used < right ? "3D" : "2D") + " one",
         bug_class::c2};
  f.where = b;
  f.step = c.step;
  f.variable = "decode_batch";
  f.value = first;
  out.push_back(std::move(f));
}

}  // namespace headroom
