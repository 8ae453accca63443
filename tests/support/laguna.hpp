// Test fixtures: Laguna XS.2 and a uniform model, built in code (docs/engines.md §1 numbers), so engine and
// backend tests do not depend on the config loader.
#pragma once

#include <string>

#include "core/model/geometry.hpp"

namespace headroom::testing {

// 40 layers; full attention at i % 4 == 0 with 48 heads, sliding (window 512) with 64; 8 kv heads.
inline model_geometry laguna_xs2() {
  model_geometry m;
  m.name = "laguna-xs2";
  m.num_attention_heads = 48;
  m.num_kv_heads = 8;
  m.head_size = 128;
  for (int i = 0; i < 40; ++i) {
    layer_geometry l;
    l.name = "model.layers." + std::to_string(i) + ".self_attn.attn";
    const bool full = i % 4 == 0;
    l.kind = full ? attn_kind::full : attn_kind::sliding;
    l.num_heads = full ? 48 : 64;
    l.num_kv_heads = 8;
    l.head_size = l.head_size_v = 128;
    l.sliding_window = full ? 0 : 512;
    m.layers.push_back(l);
  }
  return m;
}

inline model_geometry uniform(int layers, int64_t heads, int64_t kv, int64_t d) {
  model_geometry m;
  m.name = "uniform";
  m.num_attention_heads = heads;
  m.num_kv_heads = kv;
  m.head_size = d;
  for (int i = 0; i < layers; ++i)
    m.layers.push_back(
        {"model.layers." + std::to_string(i) + ".self_attn.attn", attn_kind::full, heads, kv, d, d, 0, 0});
  return m;
}

}  // namespace headroom::testing
