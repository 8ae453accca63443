// headroom's mirror of SGLang's FA3 schedule (core/backends/fa3* with fa3_build::upstream:
// fa3_upstream_tile_size, fa3_upstream_layout_of) against Dao-AILab's FA3 host rules and header code
// (targets/engine/fa3/fa3_upstream_schedule.hpp, the checkout in HEADROOM_FA3_UPSTREAM_DIR), which
// SGLang's sgl-attn follows, on the CPU: random decode calls as SGLang's backend makes them (one
// query row, no window, the heuristic's split count), and for each the mask, the tile, the split
// count, the head swizzle and the layout's length must agree (SM90 with 132 SMs). Its own program:
// Dao-AILab's headers define the fork's names differently. Built only with
// -DHEADROOM_FA3_UPSTREAM_DIR; label cpu.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "core/backends/fa3.hpp"
#include "targets/engine/fa3/fa3_upstream_schedule.hpp"
#include "tests/engine_target/fa3_draw.hpp"
#include "tests/engine_target/fa3_golden_writer.hpp"

namespace headroom {
namespace {

TEST(fa3_upstream_schedule, sglang_mirror_equals_dao_ailabs_rules_on_random_calls) {
  constexpr int calls = 200'000;
  std::mt19937_64 rng(2026);
  field_diffs diffs;
  fa3_golden_writer golden("upstream", HEADROOM_FA3_TREE_COMMIT, 1000);
  for (int i = 0; i < calls; ++i) {
    const drawn_call d = draw(rng, true);  // SGLang passes no split count
    const fa3_answer mirror = fa3_mirror_answer(d.c, d.batch, d.num_splits);

    const engine::fa3::schedule_call call = call_of(d);
    ASSERT_EQ(engine::fa3::refusal(call), "");
    const engine::fa3_upstream::schedule s = engine::fa3_upstream::schedule_of(call, 90, fa3_num_sms);

    const fa3_answer fa3{s.causal, s.local, s.block_m, s.block_n, s.num_splits, s.head_swizzle, s.entries};
    note_answers(diffs, mirror, fa3, d);
    golden.add(d, fa3);
  }
  diffs.report(calls);
}

}  // namespace
}  // namespace headroom
