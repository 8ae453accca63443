// `headroom plan` under --engine-flavour sglang --backend fa3 (core/check/sglang_fa3_plan.hpp):
// SGLang's own decode schedule in place of vLLM's builder, pinned on a small case worked by hand
// from FA3's formulas as tests/backends/fa3_sglang_test.cpp works them (Dao-AILab hopper/, 132
// SMs, 16-bit, page size 16, tiles 128 x 128 at D 128 with a paged cache).
#include <gtest/gtest.h>

#include "core/check/sglang_fa3_plan.hpp"
#include "tests/support/laguna.hpp"

namespace headroom {
namespace {

// Config: 8 heads over 1 kv head, head_dim 128. Layer 0 as the config, layer 1 full with 8 kv
// heads (MHA), layer 2 sliding (schedules its own). Pool 8 (graphs 1, 2, 4, 8), max_model_len
// 4096, the sweep's decode length 3000.
model_geometry small_model() {
  model_geometry m;
  m.name = "sglang-fa3-plan";
  m.num_attention_heads = 8;
  m.num_kv_heads = 1;
  m.head_size = 128;
  m.layers = {{"model.layers.0.self_attn.attn", attn_kind::full, 8, 1, 128, 128, 0, 0},
              {"model.layers.1.self_attn.attn", attn_kind::full, 8, 8, 128, 128, 0, 0},
              {"model.layers.2.self_attn.attn", attn_kind::sliding, 8, 1, 128, 128, 64, 0}};
  return m;
}

check_options sglang_options() {
  check_options o;
  o.backends = {backend::fa3};
  o.engine.flavour = engine_flavour::sglang;
  o.max_num_seqs = 8;
  o.decode_seq_len = 3000;
  return o;
}

// The schedule: 8 / 1 / 128 (causal kept: 64 < D <= 128), splits of one m-block x 1 kv head
// (the batch counts as 1): 3000 keys, 24 n-blocks, the first s within 85% of 24 / 132 is 21;
// 4096 keys, 32 n-blocks: 28; 1 key: 1. The layout: 1 + 4 x round_up(b, 4): 17 for 1 request,
// 33 for 8 (the persistent buffer of the largest graph, 8, is 33 too).
// A request's splits (the prepare kernel): one request, 24 blocks, ceil(24 x 1.1 / 132) = 1 a SM:
// min(24, 21) = 21; eight, 192 blocks, ceil(192 x 1.1 / 132) = 2 a SM: min(ceil(24 / 2), s) = 12.
// The MHA layer runs 8 m-blocks: 8 s / 132 peaks at s = 16, the first within 85% is 14; so under
// eager decode of one request the schedule gives it 21 splits past the layer's 14 (out_accum),
// and everywhere else 12 or 1, within 14. The config's own layer runs the schedule's count
// (at the page table's 3008 keys eager, 24 n-blocks: 21; the full table's 4096 in graphs: 28).
TEST(SglangFa3Plan, HandWorkedSchedule) {
  const auto plans = sglang_fa3_plan(small_model(), sglang_options());
  ASSERT_EQ(plans.size(), 1u);
  const sglang_fa3_rank_plan& p = plans[0];
  EXPECT_EQ(p.q_heads, 8);
  EXPECT_EQ(p.kv_heads, 1);
  EXPECT_EQ(p.head_size, 128);
  EXPECT_EQ(p.page_size, 16);
  EXPECT_EQ(p.full_layers, 2);
  EXPECT_EQ(p.sliding_layers, 1);
  EXPECT_TRUE(p.disabled.empty());
  ASSERT_EQ(p.passes.size(), 4u);
  struct want {
    sglang_fa3_pass pass;
    int64_t batch, keys, splits, request, entries, buffer, config_run, mha_run;
    bool short_accum;
  };
  const want w[] = {{sglang_fa3_pass::eager, 1, 3000, 21, 21, 17, 17, 21, 14, true},
                    {sglang_fa3_pass::eager, 8, 3000, 21, 12, 33, 33, 21, 14, false},
                    {sglang_fa3_pass::replay, 8, 4096, 28, 12, 33, 33, 28, 14, false},
                    {sglang_fa3_pass::capture, 8, 1, 1, 1, 33, 33, 28, 14, false}};
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    const sglang_fa3_pass_row& r = p.passes[i];
    EXPECT_EQ(r.pass, w[i].pass);
    EXPECT_EQ(r.batch, w[i].batch);
    EXPECT_EQ(r.sched_keys, w[i].keys);
    EXPECT_EQ(r.splits, w[i].splits);
    EXPECT_EQ(r.request_splits, w[i].request);
    EXPECT_EQ(r.entries, w[i].entries);
    EXPECT_EQ(r.buffer_entries, w[i].buffer);
    ASSERT_EQ(r.runs.size(), 2u);
    EXPECT_EQ(r.runs[0].kv_heads, 1);
    EXPECT_EQ(r.runs[0].splits, w[i].config_run);
    EXPECT_EQ(r.runs[0].entries, w[i].entries);
    EXPECT_FALSE(r.runs[0].shape_fails || r.runs[0].out_accum_short);
    EXPECT_EQ(r.runs[1].kv_heads, 8);
    EXPECT_EQ(r.runs[1].splits, w[i].mha_run);
    EXPECT_FALSE(r.runs[1].shape_fails);
    EXPECT_EQ(r.runs[1].out_accum_short, w[i].short_accum);
  }
}

// The printed block: the geometry used, each pass's numbers, the layers and the steps with none.
TEST(SglangFa3Plan, PrintsTheSchedule) {
  const std::string t = sglang_fa3_plan_text(sglang_fa3_plan(small_model(), sglang_options()));
  for (const char* line :
       {"tp 1: SGLang fa3 decode schedule",
        "scheduled with the config's 8 heads, 1 kv heads, head_dim 128 (no headdim_v: v taken as 128), page "
        "size 16",
        "given to 2 non-sliding layer(s); 1 sliding layer(s) schedule their own",
        "eager decode, 1 request(s), max_seqlen_k 3000: num_splits 21 (a request at most 21), 17 metadata "
        "entries of 17\n",
        "1 layer(s) of 8 heads, 8 kv heads, head size 128: run num_splits 14, expects 17 entries: out_accum "
        "too short",
        "decode graph replay, graph of 8, max_seqlen_k 4096: num_splits 28 (a request at most 12), 33 "
        "metadata "
        "entries of 33 (persistent buffer)",
        "decode graph capture, graph of 8, max_seqlen_k 1: num_splits 1 (a request at most 1), 33 metadata "
        "entries of 33",
        "none made for extend, mixed, target verify and draft steps"})
    EXPECT_NE(t.find(line), std::string::npos) << line << "\nin:\n" << t;
}

// A head size across FA3's one-token causal rule from the config's: a full layer of 256 expects
// 1 + 3 x 4 = 13 entries for one request where the schedule writes 17.
TEST(SglangFa3Plan, ShowsTheCausalRule) {
  model_geometry m = small_model();
  m.layers[1].head_size = m.layers[1].head_size_v = 256;
  const auto plans = sglang_fa3_plan(m, sglang_options());
  const sglang_fa3_pass_row& eager = plans.at(0).passes.at(0);
  ASSERT_EQ(eager.runs.size(), 2u);
  EXPECT_EQ(eager.entries, 17);
  EXPECT_EQ(eager.runs[1].entries, 13);
  EXPECT_TRUE(eager.runs[1].shape_fails);
  EXPECT_NE(sglang_fa3_plan_text(plans).find("expects 13 entries: CHECK_SHAPE fails"), std::string::npos);
}

// A layer whose head size v is not the config's head_dim (MiMo-V2's full layers: 64 heads over 4,
// 192 / 128): the schedule is told none, the run's row names its v. One request of 3000 keys,
// eager, pages of 16: 16 packed rows, no TMA, 96-key tiles on both sides; the run's 3008 keys make
// 32 n-blocks, 4 m-blocks in all: 4 s / 132 peaks at s = 32, the first within 85% is 28. Head size
// 192 is not causal at one token: 1 + 3 x 4 = 13 entries.
TEST(SglangFa3Plan, NamesTheLayersHeadSizeV) {
  model_geometry m = testing::uniform(1, 64, 4, 192);
  m.layers[0].head_size_v = 128;
  const auto plans = sglang_fa3_plan(m, sglang_options());
  const sglang_fa3_pass_row& eager = plans.at(0).passes.at(0);
  ASSERT_EQ(eager.runs.size(), 1u);
  EXPECT_EQ(eager.runs[0].head_size_v, 128);
  EXPECT_EQ(eager.runs[0].splits, 28);
  EXPECT_EQ(eager.runs[0].entries, 13);
  const std::string t = sglang_fa3_plan_text(plans);
  for (const char* line :
       {"head_dim 192 (no headdim_v: v taken as 192)",
        "1 layer(s) of 64 heads, 4 kv heads, head size 192, head size v 128: run num_splits "
        "28, expects 13 entries\n"})
    EXPECT_NE(t.find(line), std::string::npos) << line << "\nin:\n" << t;
}

// No precompute under DP attention: the geometry and the reason, no pass; the vllm flavour or a
// backend list without fa3 is not SGLang's plan.
TEST(SglangFa3Plan, NoneUnderDpAttention) {
  check_options o = sglang_options();
  o.engine.attn_tp_size = 2;
  const auto plans = sglang_fa3_plan(small_model(), o);
  EXPECT_TRUE(plans.at(0).passes.empty());
  EXPECT_EQ(plans.at(0).disabled, "DP attention");
  EXPECT_TRUE(plans_sglang_fa3(sglang_options()));
  check_options vllm = sglang_options();
  vllm.engine.flavour = engine_flavour::vllm;
  EXPECT_FALSE(plans_sglang_fa3(vllm));
  check_options triton = sglang_options();
  triton.backends = {backend::triton};
  EXPECT_FALSE(plans_sglang_fa3(triton));
}

}  // namespace
}  // namespace headroom
