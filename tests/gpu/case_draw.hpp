// What both GPU lanes' case generators draw the same way (gpu_cases.cpp, gpu_prefill_cases.cpp):
// a small deterministic draw, the element types, block sizes and head sizes, and the layer with its
// run settings, in one fixed order so a lane's case stream stays the same.
#pragma once

#include <cstdint>
#include <string>

#include "tests/gpu/gpu_cases.hpp"

namespace headroom::gpu_test {

struct draw {
  splitmix64 rng;
  int64_t below(int64_t n) { return static_cast<int64_t>(rng.next() % static_cast<uint64_t>(n)); }
  template <class T, std::size_t N>
  T pick(const T (&a)[N]) {
    return a[below(static_cast<int64_t>(N))];
  }
  // The builder's group for a layer group g: smaller for an overflow, else at least as large.
  int64_t builder_group(int64_t g, bool want_overflow) {
    return want_overflow && g > 1 ? 1 + below(g - 1) : g + (below(3) == 0 ? below(3) : 0);
  }
};

// Head sizes of real models and a few odd ones (padded to 64, 128, 256 in the bodies).
inline constexpr int64_t head_sizes[] = {64, 128, 128, 80, 96, 256, 40, 112};
inline constexpr dtype dtypes[] = {dtype::bf16, dtype::bf16, dtype::fp16, dtype::fp32};
inline constexpr int64_t block_sizes[] = {16, 16, 8, 32, 5};

// Element type, block size, input seed and the layer of case `index`; `group` draws the layer's
// GQA group after its kv heads.
template <class Group>
void draw_layer(owned_case& c, draw& d, uint64_t index, Group group) {
  c.index = index;
  c.layout = index % 2 ? kv_layout::packed : kv_layout::separate;  // no draw: the streams stay as they were
  c.dt = d.pick(dtypes);
  c.block_size = d.pick(block_sizes);
  c.seed = d.rng.next();
  c.layer.name = "model.layers." + std::to_string(index % 40) + ".self_attn.attn";
  c.layer.num_kv_heads = 1 + d.below(4);
  c.layer.num_heads = c.layer.num_kv_heads * group();
  c.layer.head_size = c.layer.head_size_v = d.pick(head_sizes);
  c.layer.sliding_window = d.below(4) == 0 ? 1 + d.below(200) : 0;
}

}  // namespace headroom::gpu_test
