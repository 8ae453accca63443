// The formula-level classes C9 (head padding; head size from hidden_size) and C11 (the Mamba state
// column on hybrid models): each mutant caught with hand-computed numbers, the fix clean, and
// their engine settings in case JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/check/check.hpp"
#include "core/engine/mamba_group.hpp"
#include "core/util/error.hpp"
#include "tests/support/laguna.hpp"

namespace headroom {
namespace {

report check(const model_geometry& m, check_options o) {
  o.backends = {backend::triton};
  model_executor ex;
  return run_check(m, o, ex);
}

std::vector<const violation*> of(const report& r, const std::string& buffer) {
  std::vector<const violation*> out;
  for (const auto& v : r.violations)
    if (v.buffer == buffer) out.push_back(&v);
  return out;
}

// An MLA-like model (Kimi-K3's 96 heads, one latent kv head; q rows of 576, outputs of 512).
model_geometry mla(int64_t heads) {
  model_geometry m = testing::uniform(2, heads, 1, 576);
  for (auto& l : m.layers) l.head_size_v = 512;
  return m;
}

// Tile 16, bf16, the whole-model sweep's one decode token (T = 1):
//   tp 8: h = 12, repeat 16 // 12 = 1 -> q of 12 heads (12*576*2 = 13824 B, the tile reads
//         16*576*2 = 18432 B); unpad o[:, ::1] keeps 16 rows (16*512*2 = 16384 B > 12*512*2 = 12288 B)
//   tp 16: h = 6, repeat 2 -> q of 12 heads (13824 B vs 18432 B); o[:, ::2] keeps 8 rows
//         (8192 B > 6*512*2 = 6144 B); tp 2 and 4 (48, 24 heads) need no padding.
TEST(ClassC9, DivisorsOnlyPaddingOnNinetySixHeads) {
  check_options o;
  o.tps = {2, 4, 8, 16};
  o.engine.head_tile = 16;
  EXPECT_TRUE(check(mla(96), o).ok);  // the fix: pad to exactly 16, keep o[:, :h]
  o.mutants = {"head-pad-divisors-only"};
  const report r = check(mla(96), o);
  const auto q = of(r, "mla_q_padded"), out = of(r, "mla_output");
  ASSERT_EQ(q.size(), 2u);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(r.violations.size(), 4u);
  for (const violation* v : q) {
    EXPECT_EQ(v->capacity_bytes, 13824);
    EXPECT_EQ(v->required_bytes, 18432);
  }
  EXPECT_EQ(out[0]->tp, 8);
  EXPECT_EQ(out[0]->capacity_bytes, 12288);
  EXPECT_EQ(out[0]->required_bytes, 16384);
  EXPECT_EQ(out[1]->tp, 16);
  EXPECT_EQ(out[1]->capacity_bytes, 6144);
  EXPECT_EQ(out[1]->required_bytes, 8192);
  for (const auto& v : r.violations) {
    EXPECT_EQ(v.inv, invariant::buffer_capacity);
    EXPECT_EQ(v.cls, bug_class::c9);
  }
  std::vector<std::pair<int64_t, int64_t>> heads;  // (tp, heads_per_rank) class thresholds
  for (const auto& t : r.thresholds)
    if (t.variable == "heads_per_rank") heads.push_back({t.tp, t.min_failing});
  EXPECT_EQ(heads, (std::vector<std::pair<int64_t, int64_t>>{{8, 12}, {16, 6}}));
}

TEST(ClassC9, DivisorsOfTheTileAndNoTileAreClean) {
  check_options o;
  o.tps = {8, 16};  // 64 heads: 8 and 4 per rank divide 16
  o.engine.head_tile = 16;
  o.mutants = {"head-pad-divisors-only"};
  EXPECT_TRUE(check(mla(64), o).ok);
  o.engine.head_tile = 0;  // no padding kernel
  EXPECT_TRUE(check(mla(96), o).ok);
}

// A case checks its own batch: 3 tokens of h = 5 heads (80 heads at tp 16), tile 16: the padded q
// holds 5 * 3 = 15 heads (3*15*576*2 = 51840 B of the 3*16*576*2 = 55296 B read); o[:, ::3]
// keeps ceil(16 / 3) = 6 rows (3*6*512*2 = 18432 B > 3*5*512*2 = 15360 B).
TEST(ClassC9, ACaseUsesItsOwnTokens) {
  check_case c = make_case(mla(80), 16, backend::triton, policy::per_layer, grouping::heads, true, 16, 0);
  c.engine.head_tile = 16;
  c.mutants = {"head-pad-divisors-only"};
  c.b = decode_batch(3, 64);
  model_executor ex;
  const report r = run_case(c, ex);
  ASSERT_EQ(r.violations.size(), 2u);
  EXPECT_EQ(of(r, "mla_q_padded").at(0)->capacity_bytes, 51840);
  EXPECT_EQ(of(r, "mla_q_padded").at(0)->required_bytes, 55296);
  EXPECT_EQ(of(r, "mla_output").at(0)->capacity_bytes, 15360);
  EXPECT_EQ(of(r, "mla_output").at(0)->required_bytes, 18432);
}

// Laguna S-2.1's shape (SGLang #30298): hidden 3072, 48 heads, head_dim 128. The builder pads
// segm_output rows for next_pow2(3072 // 48 = 64) = 64 while the layers write 128: batch T fails
// iff T*H*16*128 > thr*H*16*64, i.e. 2T > thr, with thr = snap(128 // kv) = 16, 32, 64, 128 at
// tp 1, 2, 4, 8 (8 kv heads): first failures 9, 17, 33, 65.
TEST(ClassC9, HeadSizeFromHiddenSize) {
  model_geometry m = testing::uniform(4, 48, 8, 128);
  m.hidden_size = 3072;
  check_options o;
  o.tps = {1, 2, 4, 8};
  EXPECT_TRUE(check(m, o).ok);
  o.mutants = {"head-dim-from-hidden"};
  const report r = check(m, o);
  std::map<int64_t, int64_t> first;
  for (const auto& t : r.thresholds)
    if (t.min_failing_decode_batch) first[t.tp] = *t.min_failing_decode_batch;
  EXPECT_EQ(first, (std::map<int64_t, int64_t>{{1, 9}, {2, 17}, {4, 33}, {8, 65}}));
  for (const auto& v : r.violations) EXPECT_EQ(v.cls, bug_class::c9) << v.detail;
  m.hidden_size = 0;  // unknown: the mutant has nothing to divide
  EXPECT_TRUE(check(m, o).ok);
}

// A hybrid model: attention layers 0 and 3, Mamba state layers 1 and 2.
model_geometry hybrid() {
  model_geometry m = testing::uniform(4, 8, 1, 128);
  for (int i : {1, 2}) {
    m.layers[static_cast<std::size_t>(i)] = {};
    m.layers[static_cast<std::size_t>(i)].name = "model.layers." + std::to_string(i);
    m.layers[static_cast<std::size_t>(i)].kind = attn_kind::none;
    m.layers[static_cast<std::size_t>(i)].mamba_state = true;
  }
  return m;
}

// GLM-5.3-Flash's numbers (vLLM #55600): max_model_len 262144, Mamba block 1152 (the attention
// blocks aligned to it), a drafter group of 16-token blocks. Width cdiv(262144, 1152) = 228.
check_options glm() {
  check_options o;
  o.tps = {1};
  o.block_size = 1152;
  o.engine.max_model_len = 262144;
  o.engine.mamba_block_size = 1152;
  o.engine.extra_group_block_size = 16;
  return o;
}

TEST(ClassC11, GlmGroupAndColumns) {
  check_options o = glm();
  const auto g = make_mamba_group(hybrid(), o.engine, o.block_size);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->block_size, 1152);
  EXPECT_EQ(g->cache_block_size, 16);
  EXPECT_EQ(g->table_width, 228);
  EXPECT_EQ(g->layers, 2);
  EXPECT_EQ(state_column(11520, 16), 719);  // (11520 - 1) // 16
  EXPECT_EQ(state_column(11520, 1152), 9);
  o.engine.num_speculative_tokens = 2;
  EXPECT_EQ(make_mamba_group(hybrid(), o.engine, o.block_size)->table_width, 230);
  EXPECT_FALSE(make_mamba_group(testing::uniform(2, 8, 1, 128), o.engine, 16));
}

TEST(ClassC11, ResumeAt11520ReadsPastTheRow) {
  const check_options o = glm();
  check_case c = make_case(hybrid(), 1, backend::triton, policy::per_layer, grouping::heads, true, 1152, 0);
  c.engine = o.engine;
  c.b = batch{{11521}, {1}};  // resumed with 11520 computed tokens
  model_executor ex;
  EXPECT_TRUE(run_case(c, ex).ok);
  c.mutants = {"mamba-index-min-block-size"};
  const report r = run_case(c, ex);
  ASSERT_EQ(r.violations.size(), 1u);
  const violation& v = r.violations[0];
  EXPECT_EQ(v.inv, invariant::buffer_capacity);
  EXPECT_EQ(v.cls, bug_class::c11);
  EXPECT_EQ(v.buffer, "mamba_block_table");
  EXPECT_EQ(v.capacity_bytes, 228 * 4);
  EXPECT_EQ(v.required_bytes, 720 * 4);
  EXPECT_NE(v.detail.find("= 719 of a 228-column"), std::string::npos) << v.detail;
  EXPECT_NE(v.detail.find("gives 9"), std::string::npos) << v.detail;
}

// The sweep over resumes: column (n-1) // 16 first differs from (n-1) // 1152 at n = 17 (1 vs 0,
// inside the row: block_unit), and first reaches the width at n = 228 * 16 + 1 = 3649.
TEST(ClassC11, SweepFindsTheFirstWrongAndThePastTheRowResume) {
  check_options o = glm();
  EXPECT_TRUE(check(hybrid(), o).ok);
  o.mutants = {"mamba-index-min-block-size"};
  const report r = check(hybrid(), o);
  ASSERT_EQ(r.violations.size(), 2u);
  EXPECT_EQ(r.violations[0].inv, invariant::block_unit);
  EXPECT_EQ(r.violations[0].shell.b.seq_lens, std::vector<int64_t>{18});
  EXPECT_EQ(r.violations[1].inv, invariant::buffer_capacity);
  EXPECT_EQ(r.violations[1].shell.b.seq_lens, std::vector<int64_t>{3650});
  const auto t = std::find_if(r.thresholds.begin(), r.thresholds.end(),
                              [](const threshold& x) { return x.variable == "num_computed_tokens"; });
  ASSERT_NE(t, r.thresholds.end());
  EXPECT_EQ(t->cls, bug_class::c11);
  EXPECT_EQ(t->min_failing, 17);
  o.engine.extra_group_block_size = 0;  // no smaller group: the minimum is the Mamba block itself
  EXPECT_TRUE(check(hybrid(), o).ok);
}

TEST(ClassSettings, RoundTripAndBadValuesNameTheField) {
  check_case c = make_case(hybrid(), 1, backend::triton, policy::per_layer, grouping::heads, true, 16, 0);
  c.b = decode_batch(1, 8);
  c.engine.head_tile = 16;
  c.engine.mamba_block_size = 64;
  c.engine.extra_group_block_size = 8;
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(case_from_json(j, "c.json"), c);
  for (const char* field : {"head_tile", "mamba_block_size", "extra_group_block_size"})
    for (const nlohmann::json& bad :
         {nlohmann::json(-1), nlohmann::json("8"), nlohmann::json(int64_t{1} << 30)}) {
      nlohmann::json k = j;
      k["engine"][field] = bad;
      try {
        case_from_json(k, "c.json");
        ADD_FAILURE() << field << " = " << bad.dump() << " was accepted";
      } catch (const input_error& e) {
        EXPECT_EQ(e.field(), std::string("engine.") + field) << e.what();
      }
    }
}

}  // namespace
}  // namespace headroom
