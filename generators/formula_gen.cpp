// fp8 caches, vLLM's use_trtllm_attention and large blocks for the model target's cases
// (formula_gen.hpp).
#include "generators/formula_gen.hpp"

#include <tuple>

#include "core/backends/fi_backend.hpp"
#include "generators/pick.hpp"

namespace headroom::generators {

std::vector<std::pair<int, kv_quant>> drawn_caches(backend be) {
  std::vector<std::pair<int, kv_quant>> out = {{6, kv_quant::none}, {2, kv_quant::fp8_e4m3}};
  if (be == backend::flashinfer) out.push_back({1, kv_quant::fp8_e5m2});
  return out;
}

bool trtllm_off_matters(const check_case& c) {
  if (c.be != backend::flashinfer || !c.flashinfer.prefill_auto) return false;
  const auto q = [&](bool off) {
    return fi_q_dtype(fi_wrapper::tensor_core_decode, c.model.kv_dtype, c.model.kv_cache,
                      c.flashinfer.device.compute_major, off);
  };
  return q(true) != q(false);
}

rc::Gen<check_case> with_formula_settings(rc::Gen<check_case> g, const pinned_settings& pins) {
  const bool draw_cache = !pins.kv_cache && pins.tensor_core_decode.value_or(true);
  return rc::gen::mapcat(std::move(g), [pins, draw_cache](const check_case& c) {
    const auto caches = draw_cache ? weighted(drawn_caches(c.be)) : rc::gen::just(c.model.kv_cache);
    const auto large_blocks = weighted<bool>({{7, false}, {1, true}});
    return rc::gen::map(rc::gen::tuple(caches, rc::gen::arbitrary<bool>(), large_blocks),
                        [c, pins](const std::tuple<kv_quant, bool, bool>& x) {
                          const auto& [cache, trtllm_off, large] = x;
                          check_case o = c;
                          o.model.kv_cache = cache;
                          if (cache != kv_quant::none) o.flashinfer.tensor_core_decode = true;
                          if (trtllm_off_matters(o)) o.flashinfer.trtllm_attention_off = trtllm_off;
                          if (large) o.block_size = o.flashinfer.page_size = 128;
                          pin(pins, o);
                          return o;
                        });
  });
}

}  // namespace headroom::generators
