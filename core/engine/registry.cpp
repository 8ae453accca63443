// The attention-layer registry (docs/engines.md §4): every attention layer under its prefix.
#include <stdexcept>

#include "core/engine/engine.hpp"
#include "core/util/checked.hpp"

namespace headroom {

void registry::add(const rank_layer& layer) {
  if (!layers_.emplace(layer.name, layer).second)
    throw std::invalid_argument("duplicate attention layer prefix: " + layer.name);
  order_.push_back(layer.name);
}

const rank_layer* registry::find(const std::string& name) const {
  auto it = layers_.find(name);
  return it == layers_.end() ? nullptr : &it->second;
}

registry make_registry(const rank_geometry& g) {
  registry reg;
  for (const auto& l : g.layers)
    if (l.kind != attn_kind::none) reg.add(l);
  return reg;
}

kv_spec spec_of(const rank_layer& l, dtype kv_dtype, int64_t block_size, kv_quant q) {
  kv_spec s;
  s.quant = q;
  s.num_kv_heads = l.num_kv_heads;
  s.head_size = l.head_size;
  s.head_size_v = l.head_size_v;
  s.kv_dtype = kv_dtype;
  s.block_size = block_size;
  s.sliding_window = l.kind == attn_kind::sliding ? l.sliding_window : 0;
  return s;
}

int64_t page_size_bytes(const kv_spec& s) {
  return checked_product("page_size_bytes", s.block_size, s.num_kv_heads,
                         checked_add(s.head_size, s.head_size_v), kv_cache_bytes(s.kv_dtype, s.quant));
}

}  // namespace headroom
