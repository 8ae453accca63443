// SGLang's graph batch alignment and its two ceilings with two-batch overlap and attention CP
// (docs/engines.md §12, §14), every number by hand from SGLang 34af3ff's utils/common.py
// (get_cuda_graph_batch_size_alignment, get_cuda_graph_max_batch_size, get_eager_max_batch_size)
// and layers/cp/padding.py (get_cp_padding_align_size):
//   alignment = 1; x2 under two-batch overlap; x attention TP under require_gathered_buffer; then
//   x attention CP when the alignment is no multiple of it. Graph ceiling: ceil_align(pool, it).
//   Eager ceiling: under require_mlp_sync ceil_align(ceil_align(pool, attention TP), attention CP),
//   else the pool.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/backends/request_meta.hpp"
#include "core/check/settings_json.hpp"

namespace headroom {
namespace {

engine_settings sglang(int64_t pool) {
  engine_settings s;
  s.flavour = engine_flavour::sglang;
  s.max_num_seqs = pool;
  return s;
}

// Two-batch overlap alone: alignment 2; pool 5 -> graph ceiling 6; no DP attention, no gather: no
// MLP sync, eager ceiling 5; the rows max(6, 5) = 6.
TEST(SglangAlignment, TwoBatchOverlapPadsGraphsToTwo) {
  engine_settings s = sglang(5);
  s.two_batch_overlap = true;
  EXPECT_EQ(sglang_graph_multiple(s), 2);
  EXPECT_EQ(sglang_graph_ceiling(s), 6);
  EXPECT_EQ(sglang_eager_ceiling(s), 5);
  EXPECT_EQ(request_meta_rows(s, {}), 6);
  s.two_batch_overlap = false;
  EXPECT_EQ(sglang_graph_ceiling(s), 5);  // today's: alignment 1
}

// Attention TP 4 under the gather with two-batch overlap: 2 x 4 = 8, and CP 1 divides it; pool 65
// -> 72 (SGLang's own pool of 65 gives 68 without the overlap). CP 2 divides 8: still 8; CP 3 does
// not: 24, pool 65 -> 72.
TEST(SglangAlignment, OverlapTimesGatheredAttentionTp) {
  engine_settings s = sglang(65);
  s.attn_tp_size = 4;
  s.gathered_buffer = true;
  EXPECT_EQ(sglang_graph_ceiling(s), 68);
  s.two_batch_overlap = true;
  EXPECT_EQ(sglang_graph_multiple(s), 8);
  EXPECT_EQ(sglang_graph_ceiling(s), 72);
  s.attn_cp_size = 2;
  EXPECT_EQ(sglang_graph_multiple(s), 8);
  s.attn_cp_size = 3;
  EXPECT_EQ(sglang_graph_multiple(s), 24);
  EXPECT_EQ(sglang_graph_ceiling(s), 72);
}

// Attention CP: 1 % 3 != 0 -> 3; with the overlap 2 % 3 != 0 -> 6 (pool 5 -> 6, pool 7 -> 12);
// CP 2 with the overlap divides 2: 2; attention TP 4 gathered with CP 2 divides 4: 4, with CP 3: 12.
TEST(SglangAlignment, AttentionCpJoinsWhenItDoesNotDivide) {
  engine_settings s = sglang(5);
  s.attn_cp_size = 3;
  EXPECT_EQ(sglang_graph_multiple(s), 3);
  EXPECT_EQ(sglang_graph_ceiling(s), 6);
  s.two_batch_overlap = true;
  EXPECT_EQ(sglang_graph_multiple(s), 6);
  EXPECT_EQ(sglang_graph_ceiling(s), 6);
  s.max_num_seqs = 7;
  EXPECT_EQ(sglang_graph_ceiling(s), 12);
  s.attn_cp_size = 2;
  EXPECT_EQ(sglang_graph_multiple(s), 2);
  s.two_batch_overlap = false;
  s.attn_tp_size = 4;
  s.gathered_buffer = true;
  EXPECT_EQ(sglang_graph_multiple(s), 4);
  s.attn_cp_size = 3;
  EXPECT_EQ(sglang_graph_multiple(s), 12);
}

// The eager ceiling pads by CP only under MLP sync. Pool 100, attention TP 8 (DP attention), CP 3:
// eager ceil_align(ceil_align(100, 8), 3) = ceil_align(104, 3) = 105; graph alignment 1 -> 3,
// ceiling 102; rows 105, the graph-ceiling-only mutant 102. A warm-up dummy of 100 requests
// binds 105 eager and round_up(100, 3) = 102 graphed. Without DP attention or a gather: eager 100.
// A gather at attention TP 1 is MLP sync too: ceil_align(100, 3) = 102.
TEST(SglangAlignment, EagerCeilingPadsToAttentionCpUnderMlpSync) {
  engine_settings s = sglang(100);
  s.capture_sizes = {100};
  s.attn_tp_size = 8;
  s.attn_cp_size = 3;
  EXPECT_EQ(sglang_eager_ceiling(s), 105);
  EXPECT_EQ(sglang_graph_ceiling(s), 102);
  EXPECT_EQ(request_meta_rows(s, {}), 105);
  EXPECT_EQ(request_meta_rows(s, {false, true, false}), 102);
  const engine_step warmup = realise_step(s, {step_kind::dummy, 100, true, 0}, {}, {});
  EXPECT_EQ(request_meta_batches(s, warmup), (std::vector<int64_t>{102, 105}));
  s.attn_tp_size = 1;
  EXPECT_EQ(sglang_eager_ceiling(s), 100);
  s.gathered_buffer = true;
  EXPECT_EQ(sglang_eager_ceiling(s), 102);
}

// Prefill CP in sequence-split mode (--cp-strategy zigzag; is_prefill_cp_in_seq_split) doubles
// get_cp_padding_align_size, and only it: pool 100, attention TP 8 (DP attention), CP 3: eager
// ceil_align(ceil_align(100, 8), 2 x 3) = ceil_align(104, 6) = 108 (105 without); the graph
// alignment takes attn_cp_size itself, 1 -> 3, ceiling 102 either way; rows max(102, 108) = 108,
// the graph-ceiling-only mutant 102; a warm-up dummy of 100 requests binds 108 eager, 102 graphed.
// Without MLP sync no padding at all: 100. A gather at attention TP 1 and CP 1: ceil_align(101, 2)
// = 102 for a pool of 101 (101 without zigzag).
TEST(SglangAlignment, ZigzagCpDoublesTheEagerCpPadding) {
  engine_settings s = sglang(100);
  s.capture_sizes = {100};
  s.attn_tp_size = 8;
  s.attn_cp_size = 3;
  s.cp_zigzag = true;
  EXPECT_EQ(sglang_eager_ceiling(s), 108);
  EXPECT_EQ(sglang_graph_ceiling(s), 102);
  EXPECT_EQ(request_meta_rows(s, {}), 108);
  EXPECT_EQ(request_meta_rows(s, {false, true, false}), 102);
  const engine_step warmup = realise_step(s, {step_kind::dummy, 100, true, 0}, {}, {});
  EXPECT_EQ(request_meta_batches(s, warmup), (std::vector<int64_t>{102, 108}));
  s.attn_tp_size = 1;
  EXPECT_EQ(sglang_eager_ceiling(s), 100);
  engine_settings g = sglang(101);
  g.gathered_buffer = true;
  g.cp_zigzag = true;
  EXPECT_EQ(sglang_eager_ceiling(g), 102);
  g.cp_zigzag = false;
  EXPECT_EQ(sglang_eager_ceiling(g), 101);
}

// A case's engine JSON carries both settings, round trip, each range-checked by name.
TEST(SglangAlignment, CaseJsonCarriesAndChecksThem) {
  engine_settings s = sglang(5);
  s.two_batch_overlap = true;
  s.attn_cp_size = 3;
  s.cp_zigzag = true;
  const nlohmann::json j = to_json(s);
  EXPECT_EQ(j["two_batch_overlap"], true);
  EXPECT_EQ(j["attn_cp_size"], 3);
  EXPECT_EQ(j["cp_zigzag"], true);
  EXPECT_EQ(settings_from_json(j, "case.json", "engine."), s);
  const std::pair<nlohmann::json, std::string> bad[] = {
      {{{"attn_cp_size", 0}}, "engine.attn_cp_size"},
      {{{"attn_cp_size", 65}}, "engine.attn_cp_size"},
      {{{"two_batch_overlap", "yes"}}, "two_batch_overlap"},
      {{{"cp_zigzag", 2}}, "cp_zigzag"},
  };
  for (const auto& [b, field] : bad) {
    try {
      settings_from_json(b, "case.json", "engine.");
      ADD_FAILURE() << b.dump();
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace headroom
