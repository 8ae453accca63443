// headroom's FA3 mirror (core/backends/fa3*) against FA3's own host rules and header code
// (targets/engine/fa3/fa3_schedule.hpp: tile_size.h, heuristics.h of the checkout in
// HEADROOM_FA3_DIR), on the CPU: random calls of vLLM's FlashAttention builder, and for each the
// normalised mask, the tile, the split count, the head swizzle, the dynamic split and the layout's
// length must be the same on both sides (SM90 with 132 SMs, the mirror's device). Built only with
// -DHEADROOM_FA3_DIR; label cpu.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "core/backends/fa3.hpp"
#include "targets/engine/fa3/fa3_schedule.hpp"

namespace headroom {
namespace {

struct drawn_call {
  fa3_call c;
  int64_t batch = 1, num_splits = 0;
  std::string text() const {
    std::ostringstream o;
    o << "batch " << batch << ", " << c.q_heads << " / " << c.kv_heads << " heads, D " << c.head_size
      << ", page " << c.page_size << ", window " << c.window << ", max_seqlen_q " << c.max_query_len
      << ", max_seqlen_k " << c.max_seq_len << ", num_splits " << num_splits << (c.e4m3 ? ", e4m3" : "");
    return o.str();
  }
};

drawn_call draw(std::mt19937_64& rng) {
  const auto pick = [&](std::initializer_list<int64_t> xs) {
    return *(xs.begin() + std::uniform_int_distribution<std::size_t>(0, xs.size() - 1)(rng));
  };
  const auto upto = [&](int64_t hi) { return std::uniform_int_distribution<int64_t>(1, hi)(rng); };
  const auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  drawn_call d;
  fa3_call& c = d.c;
  c.kv_heads = pick({1, 2, 4, 8, 16, 32});
  c.q_heads = c.kv_heads * pick({1, 2, 3, 4, 5, 6, 7, 8, 16});
  c.head_size = pick({32, 64, 80, 96, 128, 160, 192, 256});
  c.page_size = pick({16, 32, 64, 128, 256});
  c.window = chance(0.3) ? upto(8192) : 0;
  c.max_query_len = chance(0.5) ? 1 : upto(chance(0.5) ? 64 : 8192);
  c.max_seq_len = c.max_query_len + upto(chance(0.5) ? 4096 : 1 << 20) - 1;
  c.e4m3 = chance(0.2);
  d.batch = chance(0.1) ? upto(4000) : upto(256);
  d.num_splits = chance(0.4) ? fa3_graph_max_splits : 0;
  return d;
}

TEST(fa3_schedule, mirror_equals_fa3s_own_rules_on_random_calls) {
  constexpr int calls = 200'000;
  std::mt19937_64 rng(2026);
  std::map<std::string, int> differ;
  std::map<std::string, std::string> first;
  const auto compare = [&](const char* field, int64_t mirror, int64_t fa3, const drawn_call& d) {
    if (mirror == fa3) return;
    if (differ[field]++ == 0)
      first[field] = d.text() + ": mirror " + std::to_string(mirror) + ", FA3 " + std::to_string(fa3);
  };
  for (int i = 0; i < calls; ++i) {
    const drawn_call d = draw(rng);
    const fa3_call& c = d.c;
    const fa3_mask mask = fa3_mask_of(c);
    const fa3_tile tile = fa3_call_tile(c);
    const int64_t splits = d.num_splits > 0 ? d.num_splits : fa3_heuristic_splits(c);
    const bool swizzle = fa3_head_swizzle(c.max_query_len, c.max_seq_len, c.head_size, c.window);
    const fa3_layout layout = fa3_layout_of(d.batch, splits, swizzle);

    engine::fa3::schedule_call call;
    call.batch = static_cast<int>(d.batch);
    call.max_seqlen_q = static_cast<int>(c.max_query_len),
    call.max_seqlen_k = static_cast<int>(c.max_seq_len);
    call.num_heads = static_cast<int>(c.q_heads), call.num_heads_k = static_cast<int>(c.kv_heads);
    call.headdim = static_cast<int>(c.head_size), call.page_size = static_cast<int>(c.page_size);
    call.e4m3 = c.e4m3;
    call.window_left = c.window > 0 ? static_cast<int>(c.window - 1) : -1;  // vLLM: (window - 1, 0)
    call.window_right = c.window > 0 ? 0 : -1;
    call.num_splits = static_cast<int>(d.num_splits);
    ASSERT_EQ(engine::fa3::refusal(call), "");
    const engine::fa3::schedule s = engine::fa3::schedule_of(call, 90, fa3_num_sms, nullptr, nullptr);

    compare("causal", mask.causal, s.params.is_causal, d);
    compare("local", mask.local, s.params.is_local, d);
    compare("block_m", tile.m, s.block_m, d);
    compare("block_n", tile.n, s.block_n, d);
    compare("num_splits", splits, s.params.num_splits, d);
    compare("head_swizzle", swizzle, s.params.head_swizzle, d);
    compare("dynamic_split", layout.dynamic_split, s.dynamic_split, d);
    compare("entries", layout.size(), s.entries, d);
  }
  for (const auto& [field, n] : differ)
    ADD_FAILURE() << field << " differs in " << n << " of " << calls << " calls; first: " << first[field];
  std::printf("fa3_schedule: %d random calls, %zu fields that differ\n", calls, differ.size());
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
