// The FA3 schedule fields that headroom's mirror gives a call and that FA3's own host rules are held
// to: the mask, the tile, the split count, the head swizzle and the metadata length. One place for
// the comparisons with FA3's rules (tests/engine_target/fa3_schedule_test.cpp,
// fa3_upstream_schedule_test.cpp) and the golden table of their answers
// (tests/backends/fa3_golden_test.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "core/backends/fa3.hpp"

namespace headroom {

struct fa3_answer {
  int64_t causal = 0, local = 0, block_m = 0, block_n = 0, num_splits = 0, head_swizzle = 0, entries = 0;
};

// The fields by name, in the golden table's order.
inline std::array<std::pair<const char*, int64_t>, 7> fa3_fields(const fa3_answer& a) {
  return {{{"causal", a.causal},
           {"local", a.local},
           {"block_m", a.block_m},
           {"block_n", a.block_n},
           {"num_splits", a.num_splits},
           {"head_swizzle", a.head_swizzle},
           {"entries", a.entries}}};
}

// The mirror's answer for call c over `batch` requests with `splits_passed` (0: the heuristic's),
// laid out as c's build lays the metadata out.
inline fa3_answer fa3_mirror_answer(const fa3_call& c, int64_t batch, int64_t splits_passed) {
  const fa3_mask mask = fa3_mask_of(c);
  const fa3_tile tile = fa3_call_tile(c);
  const int64_t splits = splits_passed > 0 ? splits_passed : fa3_heuristic_splits(c);
  const bool swizzle = fa3_head_swizzle(c.max_query_len, c.max_seq_len, c.head_size, c.window);
  const fa3_layout layout = c.build == fa3_build::upstream
                                ? fa3_upstream_layout_of(batch, mask.local, swizzle)
                                : fa3_layout_of(batch, splits, swizzle);
  return {mask.causal, mask.local, tile.m, tile.n, splits, swizzle, layout.size()};
}

}  // namespace headroom
