// Cases around the 32-bit token offsets of docs/catalogue.md C6 (the formulas only): one Triton
// layer of H heads per rank of size D, one scheduled request of T tokens with T near
// 2^31 / (H x D), with and without the int32-token-offsets mutant.
#include "generators/case_gen.hpp"

#include <algorithm>

namespace headroom::generators {
namespace {

// The case at TP size `tp`: H x tp query heads over one replicated kv head, so H per rank.
check_case offset_case(int64_t heads, int64_t head_size, int64_t delta, bool int32, int64_t tp) {
  model_geometry m;
  m.name = "offsets";
  m.num_attention_heads = heads * tp;
  m.num_kv_heads = 1;
  m.head_size = head_size;
  m.layers.push_back(
      {"model.layers.0.self_attn.attn", attn_kind::full, heads * tp, 1, head_size, head_size, 0, 0});
  const int64_t tokens =
      std::clamp<int64_t>((int64_t{1} << 31) / (heads * head_size) + delta, 1, max_settings_tokens);
  check_case c = make_case(m, tp, backend::triton, policy::per_layer, grouping::heads, true, 16, 0);
  c.engine.max_num_batched_tokens = std::max<int64_t>(tokens, c.engine.max_num_batched_tokens);
  c.b = {{tokens}, {tokens}};
  if (int32) c.mutants = {"int32-token-offsets"};
  return c;
}

}  // namespace

rc::Gen<check_case> large_offset_cases(const std::optional<std::vector<int64_t>>& tps) {
  using shape = std::tuple<int64_t, int64_t, int64_t, bool>;
  const auto shapes =
      rc::gen::tuple(rc::gen::element<int64_t>(1, 2, 8, 32, 64, 128), rc::gen::element<int64_t>(64, 128, 256),
                     rc::gen::element<int64_t>(-2, -1, 0, 1, 2, 1000), rc::gen::arbitrary<bool>());
  const auto at_tp = [](const shape& s, int64_t tp) {
    const auto& [heads, head_size, delta, int32] = s;
    return offset_case(heads, head_size, delta, int32, tp);
  };
  if (!tps) return rc::gen::map(shapes, [at_tp](const shape& s) { return at_tp(s, 1); });
  // A TP size of the given list (fuzz --tp), drawn beside the shape.
  return rc::gen::map(rc::gen::pair(shapes, rc::gen::elementOf(*tps)),
                      [at_tp](const std::pair<shape, int64_t>& s) { return at_tp(s.first, s.second); });
}

}  // namespace headroom::generators
