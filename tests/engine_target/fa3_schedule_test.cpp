// headroom's FA3 mirror (core/backends/fa3*) against FA3's own host rules and header code
// (targets/engine/fa3/fa3_schedule.hpp: tile_size.h, heuristics.h of the checkout in
// HEADROOM_FA3_DIR), on the CPU: random calls of vLLM's FlashAttention builder, and for each the
// normalised mask, the tile, the split count, the head swizzle, the dynamic split and the layout's
// length must be the same on both sides (SM90 with 132 SMs, the mirror's device). Built only with
// -DHEADROOM_FA3_DIR; label cpu.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "core/backends/fa3.hpp"
#include "targets/engine/fa3/fa3_schedule.hpp"
#include "tests/engine_target/fa3_draw.hpp"
#include "tests/engine_target/fa3_golden_writer.hpp"

namespace headroom {
namespace {

TEST(fa3_schedule, mirror_equals_fa3s_own_rules_on_random_calls) {
  constexpr int calls = 200'000;
  std::mt19937_64 rng(2026);
  field_diffs diffs;
  fa3_golden_writer golden("fork", HEADROOM_FA3_TREE_COMMIT, 1000);
  for (int i = 0; i < calls; ++i) {
    const drawn_call d = draw(rng, false);
    const fa3_answer mirror = fa3_mirror_answer(d.c, d.batch, d.num_splits);

    const engine::fa3::schedule_call call = call_of(d);
    ASSERT_EQ(engine::fa3::refusal(call), "");
    const engine::fa3::schedule s = engine::fa3::schedule_of(call, 90, fa3_num_sms, nullptr, nullptr);

    const fa3_answer fa3{s.params.is_causal,  s.params.is_local,     s.block_m, s.block_n,
                         s.params.num_splits, s.params.head_swizzle, s.entries};
    note_answers(diffs, mirror, fa3, d);
    diffs.note("dynamic_split",
               fa3_layout_of(d.batch, mirror.num_splits, mirror.head_swizzle != 0).dynamic_split,
               s.dynamic_split, d);
    golden.add(d, fa3);
  }
  diffs.report(calls);
}

// The call FA3 refuses: its query heads must be a whole multiple of its kv heads.
TEST(fa3_schedule, refuses_partial_groups) {
  engine::fa3::schedule_call c;
  c.num_heads = 1, c.num_heads_k = 8;
  EXPECT_NE(engine::fa3::refusal(c), "");
  c.num_heads = 16;
  EXPECT_EQ(engine::fa3::refusal(c), "");
}

}  // namespace
}  // namespace headroom
