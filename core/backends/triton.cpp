// Triton unified attention sizing (docs/engines.md §5).
#include "core/backends/triton.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/util/checked.hpp"

namespace headroom {

int64_t triton_threshold(int64_t kv_heads_b, const triton_options& o, const engine_settings& s) {
  int64_t thr = kv_heads_b > 0 ? triton_thr_numerator / kv_heads_b : 0;
  if (o.cap_max_num_seqs) thr = std::max<int64_t>(1, std::min(thr, s.max_num_seqs));
  if (o.snap_to_capture && has_full_graphs(s.cg_mode)) {
    const auto sizes = capture_sizes_of(s);
    if (!sizes.empty()) {  // nearest capture size; ties go to the smaller one
      int64_t best = sizes.front();
      for (int64_t v : sizes)
        if (std::llabs(v - thr) < std::llabs(best - thr)) best = v;
      thr = best;
    }
  }
  return thr;
}

triton_plan plan_triton(int64_t builder_heads, int64_t builder_kv_heads, int64_t head_size,
                        const triton_options& o, const engine_settings& s) {
  triton_plan p;
  p.thr = triton_threshold(builder_kv_heads, o, s);
  p.builder_heads = builder_heads;
  p.builder_kv_heads = builder_kv_heads;
  p.head_size_padded = next_pow2(head_size);
  const int64_t rows = checked_product("segm rows", p.thr, builder_heads, triton_segments);
  p.buffers = {
      {"segm_output", checked_product("segm_output bytes", rows, p.head_size_padded, 4), 4},
      {"segm_max", checked_mul(rows, 4, "segm_max bytes"), 4},
      {"segm_expsum", checked_mul(rows, 4, "segm_expsum bytes"), 4},
  };
  return p;
}

bool triton_uses_3d(const triton_plan& p, const batch& b) {
  return b.max_query_len() <= 1 && b.num_seqs() <= p.thr;
}

bool triton_segment_active(int64_t s, int64_t seq_len, int64_t tile) {
  const int64_t tiles_per_segment = ceil_div(seq_len, triton_segments * tile);
  return s * tiles_per_segment * tile < seq_len;
}

int64_t triton_decode_tile(kv_quant cache) { return cache == kv_quant::none ? triton_tile : triton_tile_fp8; }

triton_shape triton_launch_shape(const rank_layer& l, const batch& b) {
  triton_shape s;
  // Fewer query heads than kv heads is no GQA group (vLLM's num_queries_per_kv would be 0 and its
  // kernel would not launch): the shape is given as for a group of one.
  const int64_t g = std::max<int64_t>(1, l.num_heads / l.num_kv_heads);
  s.block_m = g <= 16 ? 16 : next_pow2(g);
  s.block_q = s.block_m / g;
  s.grid_x = b.num_tokens() / s.block_q + b.num_seqs();
  s.grid_y = l.num_kv_heads;
  s.grid_z = triton_segments;
  s.reduce_x = b.num_tokens();
  s.reduce_y = l.num_heads;
  return s;
}

std::vector<buffer_need> triton_needs(const triton_plan& p, const rank_layer& l, const batch& b) {
  if (!triton_uses_3d(p, b)) return {};
  const int64_t dp = next_pow2(l.head_size);
  int64_t out_end = 0, stat_end = 0;
  for (int64_t t = 0; t < b.num_seqs(); ++t) {  // pure decode: token t is request t
    int64_t s_max = -1;
    for (int64_t s = 0; s < triton_segments; ++s)
      if (triton_segment_active(s, b.seq_lens[static_cast<std::size_t>(t)], p.decode_tile)) s_max = s;
    if (s_max < 0) continue;
    // Highest (h, s) row of this token: ((t*H_l + H_l-1)*16 + s_max).
    const int64_t row =
        checked_add(checked_mul(checked_add(checked_mul(t, l.num_heads), l.num_heads - 1), triton_segments),
                    s_max, "segm row");
    stat_end = std::max(stat_end, row + 1);
    out_end = std::max(
        out_end, checked_add(checked_mul(row, dp, "segm_output index"), l.head_size, "segm_output index"));
  }
  return {{"segm_output", 4, out_end}, {"segm_max", 4, stat_end}, {"segm_expsum", 4, stat_end}};
}

}  // namespace headroom
