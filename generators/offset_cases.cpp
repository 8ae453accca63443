// Cases around the 32-bit token offsets of docs/catalogue.md C6 (the formulas only): one Triton
// layer of H heads of size D, one scheduled request of T tokens with T near 2^31 / (H x D), with
// and without the int32-token-offsets mutant.
#include "generators/case_gen.hpp"

#include <algorithm>

namespace headroom::generators {

rc::Gen<check_case> large_offset_cases() {
  const auto shape =
      rc::gen::tuple(rc::gen::element<int64_t>(1, 2, 8, 32, 64, 128), rc::gen::element<int64_t>(64, 128, 256),
                     rc::gen::element<int64_t>(-2, -1, 0, 1, 2, 1000), rc::gen::arbitrary<bool>());
  return rc::gen::map(shape, [](const std::tuple<int64_t, int64_t, int64_t, bool>& t) {
    const auto& [heads, head_size, delta, int32] = t;
    model_geometry m;
    m.name = "offsets";
    m.num_attention_heads = heads;
    m.num_kv_heads = 1;
    m.head_size = head_size;
    m.layers.push_back(
        {"model.layers.0.self_attn.attn", attn_kind::full, heads, 1, head_size, head_size, 0, 0});
    const int64_t tokens =
        std::clamp<int64_t>((int64_t{1} << 31) / (heads * head_size) + delta, 1, max_settings_tokens);
    check_case c = make_case(m, 1, backend::triton, policy::per_layer, grouping::heads, true, 16, 0);
    c.engine.max_num_batched_tokens = std::max<int64_t>(tokens, c.engine.max_num_batched_tokens);
    c.b = {{tokens}, {tokens}};
    if (int32) c.mutants = {"int32-token-offsets"};
    return c;
  });
}

}  // namespace headroom::generators
