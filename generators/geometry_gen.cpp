// Geometry generators: random choices (geometry_draw) realised into valid per-layer geometries.
#include "generators/geometry_gen.hpp"

#include <algorithm>

#include "generators/pick.hpp"

namespace headroom::generators {

namespace {

// Head sizes, small first; 12, 24, 40, 48, 80, 96, 192 are not powers of two (Dp > D in Triton).
// The small ladder weighs 31; each large size the backend takes 1 (128: 2), so a backend with five
// or six of them draws one about one time in six (FlashInfer's three: one in nine).
rc::Gen<int64_t> head_sizes(const geometry_limits& lim) {
  std::vector<std::pair<int, int64_t>> w = {{6, 8},  {5, 16}, {4, 12}, {3, 4}, {4, 24},
                                            {3, 32}, {2, 40}, {2, 48}, {2, 64}};
  for (int64_t d : lim.large_head_sizes) w.push_back({d == 128 ? 2 : 1, d});
  w.erase(std::remove_if(w.begin(), w.end(), [&](auto& p) { return p.second > lim.max_head_size; }), w.end());
  return weighted(w);
}

// Per-rank GQA group sizes. Triton accepts any; FlashInfer's decode kernel only {1,2,3,4,6,8}.
// 24 and 32 take Triton's BLOCK_M = next_pow2(G) > 16 branch.
rc::Gen<int64_t> group_sizes(bool flashinfer) {
  if (flashinfer) return weighted<int64_t>({{5, 1}, {5, 2}, {2, 3}, {4, 4}, {2, 6}, {2, 8}});
  return weighted<int64_t>(
      {{5, 1}, {5, 2}, {2, 3}, {4, 4}, {1, 5}, {2, 6}, {1, 7}, {2, 8}, {1, 12}, {1, 16}, {1, 24}, {1, 32}});
}

rc::Gen<int64_t> tps(const std::vector<int64_t>& allowed) {
  std::vector<std::pair<int, int64_t>> w;
  for (int64_t tp : allowed) w.push_back({tp == 1 ? 8 : tp == 2 ? 4 : tp == 4 ? 2 : 1, tp});
  return weighted(w);
}

// Total kv heads for a TP size: split (kv_rank * tp) or replicated (a proper divisor of tp).
rc::Gen<int64_t> kv_totals(int64_t tp) {
  auto split =
      rc::gen::map(weighted<int64_t>({{4, 1}, {3, 2}, {2, 4}, {1, 8}}), [tp](int64_t r) { return r * tp; });
  if (tp == 1) return split;
  std::vector<int64_t> divisors;
  for (int64_t d = 1; d < tp; ++d)
    if (tp % d == 0) divisors.push_back(d);
  return rc::gen::weightedOneOf<int64_t>({{3, split}, {1, rc::gen::elementOf(divisors)}});
}

rc::Gen<geometry_draw> base_draws(const geometry_limits& lim) {
  using d = geometry_draw;
  return rc::gen::build<d>(
      rc::gen::set(&d::head_size, head_sizes(lim)), rc::gen::set(&d::alt_head_size, head_sizes(lim)),
      rc::gen::set(&d::groups,
                   rc::gen::container<std::vector<int64_t>>(3, group_sizes(lim.flashinfer_groups))),
      rc::gen::set(&d::hp, weighted<heads_pattern>({{2, heads_pattern::uniform},
                                                    {3, heads_pattern::periodic},
                                                    {3, heads_pattern::mixed}})),
      rc::gen::set(&d::kp, weighted<kinds_pattern>({{4, kinds_pattern::all_full},
                                                    {3, kinds_pattern::all_sliding},
                                                    {3, kinds_pattern::aligned},
                                                    {2, kinds_pattern::mixed}})),
      rc::gen::set(&d::period, rc::gen::inRange<int64_t>(2, 5)),
      rc::gen::set(&d::window, rc::gen::element<int64_t>(8, 16, 32, 64, 128, 256, 512)),
      rc::gen::set(&d::kv_dtype, weighted<dtype>({{6, dtype::bf16}, {2, dtype::fp16}, {1, dtype::fp32}})),
      rc::gen::set(&d::smaller_v, lim.value_head_sizes ? rc::gen::arbitrary<bool>() : rc::gen::just(false)));
}

// The value head size of a spec of head size d: MiMo-V2's 128 beside 192 when the draw asks for it.
int64_t value_head_size(const geometry_draw& d, int64_t head_size) {
  return d.smaller_v && head_size == 192 ? 128 : head_size;
}

// tp, then kv heads that fit it (dependent sizes: gen::mapcat): the base spec's and, for layers of
// the alternative spec, the same count or another (Gemma 4's full layers: 2 kv heads beside 8).
rc::Gen<geometry_draw> with_tp(rc::Gen<geometry_draw> g, const geometry_limits& lim) {
  return rc::gen::mapcat(g, [lim](geometry_draw d) {
    return rc::gen::mapcat(tps(lim.tps), [d](int64_t tp) {
      return rc::gen::map(
          rc::gen::tuple(kv_totals(tp), kv_totals(tp), weighted<bool>({{2, true}, {1, false}})),
          [d, tp](const std::tuple<int64_t, int64_t, bool>& t) {
            geometry_draw out = d;
            out.tp = tp;
            out.kv_total = std::get<0>(t);
            out.alt_kv_total = std::get<2>(t) ? out.kv_total : std::get<1>(t);
            return out;
          });
    });
  });
}

// Layer count, then per-layer slots, kinds and spec flags of that length.
rc::Gen<geometry_draw> with_layers(rc::Gen<geometry_draw> g, const geometry_limits& lim) {
  return rc::gen::mapcat(g, [lim](geometry_draw d) {
    return rc::gen::mapcat(rc::gen::inRange(1, lim.max_layers + 1), [d](int n) {
      const auto count = static_cast<std::size_t>(n);
      auto kinds = weighted<attn_kind>({{5, attn_kind::full}, {3, attn_kind::sliding}, {1, attn_kind::none}});
      return rc::gen::map(
          rc::gen::tuple(
              rc::gen::container<std::vector<int>>(count, rc::gen::inRange(0, 3)),
              rc::gen::container<std::vector<attn_kind>>(count, kinds),
              rc::gen::container<std::vector<bool>>(count, weighted<bool>({{3, false}, {1, true}}))),
          [d](const std::tuple<std::vector<int>, std::vector<attn_kind>, std::vector<bool>>& t) {
            geometry_draw out = d;
            std::tie(out.slots, out.kinds, out.alt_spec) = t;
            return out;
          });
    });
  });
}

// The model-wide count: the first slot's (Laguna: the full-attention layers'), any slot's, or
// unrelated to every layer (larger or smaller).
rc::Gen<geometry_draw> with_model_wide(rc::Gen<geometry_draw> g, const geometry_limits& lim) {
  return rc::gen::mapcat(g, [lim](geometry_draw d) {
    auto choice = rc::gen::weightedOneOf<int64_t>({{3, rc::gen::just(d.groups[0])},
                                                   {2, rc::gen::elementOf(d.groups)},
                                                   {1, group_sizes(lim.flashinfer_groups)}});
    return rc::gen::map(choice, [d](int64_t mw) {
      geometry_draw out = d;
      out.model_wide_group = mw;
      return out;
    });
  });
}

}  // namespace

const std::vector<int64_t>& drawn_head_sizes() {
  static const std::vector<int64_t> sizes = {4, 8, 12, 16, 24, 32, 40, 48, 64, 80, 96, 128, 192, 256, 512};
  return sizes;
}

int64_t next_smaller_head_size(int64_t d) {
  const auto& s = drawn_head_sizes();
  const auto it = std::lower_bound(s.begin(), s.end(), d);
  return it == s.begin() ? 0 : *std::prev(it);
}

std::string layer_name(std::size_t i) { return "model.layers." + std::to_string(i) + ".self_attn.attn"; }

sized_geometry realise_geometry(const geometry_draw& d) {
  auto heads_for = [&](int64_t group, int64_t kv_total) { return group * kv_rank_of(kv_total, d.tp) * d.tp; };
  sized_geometry out;
  out.tp = d.tp;
  model_geometry& m = out.model;
  m.name = "generated";
  m.num_attention_heads = heads_for(d.model_wide_group, d.kv_total);
  m.num_kv_heads = d.kv_total;
  m.head_size = d.head_size;
  m.kv_dtype = d.kv_dtype;
  bool any_attention = false;
  for (std::size_t i = 0; i < d.slots.size(); ++i) {
    const auto idx = static_cast<int64_t>(i);
    const int slot = d.hp == heads_pattern::uniform    ? 0
                     : d.hp == heads_pattern::periodic ? (idx % d.period == 0 ? 0 : 1)
                                                       : d.slots[i];
    const attn_kind kind = d.kp == kinds_pattern::all_full      ? attn_kind::full
                           : d.kp == kinds_pattern::all_sliding ? attn_kind::sliding
                           : d.kp == kinds_pattern::aligned
                               ? (slot == 0 ? attn_kind::full : attn_kind::sliding)
                               : d.kinds[i];
    layer_geometry l{layer_name(i), kind, 0, 0, 0, 0, 0};
    if (kind != attn_kind::none) {
      l.num_kv_heads = d.alt_spec[i] ? d.alt_kv_total : d.kv_total;
      l.num_heads = heads_for(d.groups[static_cast<std::size_t>(slot)], l.num_kv_heads);
      l.head_size = d.alt_spec[i] ? d.alt_head_size : d.head_size;
      l.head_size_v = value_head_size(d, l.head_size);
      l.sliding_window = kind == attn_kind::sliding ? d.window : 0;
      any_attention = true;
    }
    m.layers.push_back(l);
  }
  if (!any_attention) {  // a model needs one attention layer: the first becomes full attention
    layer_geometry& l = m.layers.front();
    l.kind = attn_kind::full;
    l.num_heads = heads_for(d.groups[0], d.kv_total);
    l.num_kv_heads = d.kv_total;
    l.head_size = d.head_size;
    l.head_size_v = value_head_size(d, l.head_size);
  }
  return out;
}

rc::Gen<geometry_draw> geometry_draws(const geometry_limits& lim) {
  return with_model_wide(with_layers(with_tp(base_draws(lim), lim), lim), lim);
}

rc::Gen<sized_geometry> geometries(const geometry_limits& lim) {
  return rc::gen::map(geometry_draws(lim), &realise_geometry);
}

rc::Gen<sized_geometry> large_geometries() {
  geometry_limits lim;
  lim.max_layers = 3;
  auto draws = rc::gen::mapcat(geometry_draws(lim), [](geometry_draw d) {
    return rc::gen::map(rc::gen::tuple(rc::gen::element<int64_t>(1, 8, 64, 1024),
                                       rc::gen::container<std::vector<int64_t>>(
                                           4, rc::gen::element<int64_t>(1, 4, 64, 512, 1000, 100000)),
                                       rc::gen::element<int64_t>(128, 4096, 65536)),
                        [d](const std::tuple<int64_t, std::vector<int64_t>, int64_t>& t) {
                          geometry_draw out = d;
                          const auto& [kv_rank, groups, head_size] = t;
                          out.kv_total = out.alt_kv_total = kv_rank * out.tp;
                          const int64_t cap = max_heads / out.kv_total;  // heads = group * kv_total <= 1e6
                          for (std::size_t i = 0; i < 3; ++i) out.groups[i] = std::min(groups[i], cap);
                          out.model_wide_group = std::min(groups[3], cap);
                          out.head_size = out.alt_head_size = head_size;
                          return out;
                        });
  });
  return rc::gen::map(draws, &realise_geometry);
}

}  // namespace headroom::generators
