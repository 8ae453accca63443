// See class_gen.hpp. Weights: a tile in 5 of 7 cases (16 mostly, as MLA kernels need), a
// hidden_size smaller than heads x head size in 3 of 8 (Laguna S-2.1's 3072 for 48 x 128 is half),
// a hybrid model in 1 of 3.
#include "generators/class_gen.hpp"

#include "generators/geometry_gen.hpp"
#include "generators/pick.hpp"

namespace headroom::generators {

rc::Gen<class_draw> class_draws() {
  using d = class_draw;
  using ratio = std::pair<int64_t, int64_t>;
  return rc::gen::build<d>(
      rc::gen::set(&d::head_tile, weighted<int64_t>({{2, 0}, {3, 16}, {1, 8}, {1, 32}})),
      rc::gen::set(&d::hidden_ratio,
                   weighted<ratio>({{2, {0, 1}}, {2, {1, 1}}, {2, {1, 2}}, {1, {1, 4}}, {1, {2, 1}}})),
      rc::gen::set(&d::hybrid, weighted<bool>({{2, false}, {1, true}})),
      rc::gen::set(&d::mamba_block_size, rc::gen::element<int64_t>(0, 64, 128, 256, 512)),
      rc::gen::set(&d::extra_group_block_size, rc::gen::element<int64_t>(0, 4, 8)),
      rc::gen::set(&d::max_model_len, rc::gen::element<int64_t>(1024, 2048, 4096)),
      rc::gen::set(&d::tensor_core_decode, weighted<bool>({{2, false}, {1, true}})),
      rc::gen::set(&d::disable_split_kv, weighted<bool>({{3, false}, {1, true}})));
}

void apply(const class_draw& d, check_case& c) {
  c.engine.head_tile = d.head_tile;
  c.flashinfer.tensor_core_decode = d.tensor_core_decode;
  c.flashinfer.disable_split_kv = d.disable_split_kv;
  model_geometry& m = c.model;
  m.hidden_size = m.num_attention_heads * m.head_size * d.hidden_ratio.first / d.hidden_ratio.second;
  if (!d.hybrid) return;
  bool any = false;
  for (auto& l : m.layers)
    if (l.kind == attn_kind::none) l.mamba_state = any = true;
  if (!any) {
    layer_geometry l;
    l.name = layer_name(m.layers.size());
    l.kind = attn_kind::none;
    l.mamba_state = true;
    m.layers.push_back(l);
  }
  c.engine.mamba_block_size = d.mamba_block_size;
  c.engine.extra_group_block_size = d.extra_group_block_size;
  c.engine.max_model_len = d.max_model_len;
}

}  // namespace headroom::generators
