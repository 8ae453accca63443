// Engine steps (core/engine/steps.hpp), pinned with values computed by hand from vLLM's rules
// (docs/catalogue.md C3-C8): padding at replay, dummy runs, draft passes, the block table's width.
#include <gtest/gtest.h>

#include "core/engine/steps.hpp"

namespace headroom {
namespace {

engine_settings settings(int64_t max_num_seqs, int64_t k = 0,
                         cudagraph_mode m = cudagraph_mode::full_and_piecewise) {
  engine_settings s;
  s.max_num_seqs = max_num_seqs;
  s.num_speculative_tokens = k;
  s.cg_mode = m;
  return s;
}

batch uniform(int64_t n, int64_t len, int64_t q) {
  batch b = decode_batch(n, len);
  b.query_lens.assign(static_cast<std::size_t>(n), q);
  return b;
}

// 13 one-token requests replay the graph of 16 (1, 2, 4, 8, 16, ...): 16 metadata rows, the 3
// padded ones empty (query_start repeats 13), q padded to 16 rows.
TEST(Steps, ScheduledDecodePadsToItsGraph) {
  const engine_step st = forward_step(settings(256), decode_batch(13, 100));
  EXPECT_EQ(st.graph_size, 16);
  EXPECT_EQ(st.num_reqs_padded, 16);
  EXPECT_EQ(st.q_rows, 16);
  ASSERT_EQ(st.query_start.size(), 17u);
  EXPECT_EQ(st.query_start[13], 13);
  EXPECT_EQ(st.query_start[16], 13);
  // max_num_seqs caps the rows: 13 requests of at most 14 pad to 16 tokens but 14 rows.
  EXPECT_EQ(forward_step(settings(14), decode_batch(13, 100)).num_reqs_padded, 14);
}

// k = 2: capture sizes 3, 6, 9, 18, ...; 5 verify requests of 3 tokens (15) replay 18 = 6 rows.
TEST(Steps, UniformDecodeRowsArePaddedTokensOverQ) {
  const engine_step st = forward_step(settings(256, 2), uniform(5, 100, 3));
  EXPECT_TRUE(st.uniform_decode);
  EXPECT_EQ(st.graph_size, 18);
  EXPECT_EQ(st.num_reqs_padded, 6);
}

// Eager steps are not padded: above the largest capture size (512 at max_num_seqs 256), or
// under a mode without FULL graphs.
TEST(Steps, EagerStepsAreNotPadded) {
  batch prefill{{600}, {600}};
  const engine_step big = forward_step(settings(256), prefill);
  EXPECT_EQ(big.graph_size, 0);
  EXPECT_EQ(big.num_reqs_padded, 1);
  EXPECT_EQ(big.q_rows, 600);
  const engine_step pw = forward_step(settings(256, 0, cudagraph_mode::piecewise), decode_batch(13, 100));
  EXPECT_EQ(pw.num_reqs_padded, 13);
  EXPECT_EQ(pw.q_rows, 13);
  // A mixed batch under FULL_AND_PIECEWISE runs a PIECEWISE graph: no metadata padding.
  EXPECT_EQ(forward_step(settings(256), batch{{40, 50}, {1, 5}}).graph_size, 0);
}

// Uniform-decode dummy: num_reqs = min(max_num_seqs, cdiv(tokens, q)), q tokens each, the last
// tokens % q; every seq_len = q.
TEST(Steps, UniformDummy) {
  const engine_step st = realise_step(settings(256, 2), {step_kind::dummy, 8, true, 0}, {}, {});
  EXPECT_EQ(st.b.query_lens, (std::vector<int64_t>{3, 3, 2}));
  EXPECT_EQ(st.b.seq_lens, (std::vector<int64_t>{3, 3, 3}));
  const engine_step one = realise_step(settings(256), {step_kind::dummy, 32, true, 0}, {}, {});
  EXPECT_EQ(one.num_reqs_padded, 32);
  EXPECT_EQ(one.b.seq_lens, std::vector<int64_t>(32, 1));
  EXPECT_EQ(one.graph_size, 32);
}

// Non-uniform dummy: num_reqs = min(tokens, max_num_seqs), tokens // num_reqs each and the
// remainder on the last; every seq_len = tokens, clamped to max_model_len by the fix (vLLM #53671)
// and not by the mutant (#53658). The derived minimal C4 case: 136 tokens, 68 requests, mml 128.
TEST(Steps, NonUniformDummy) {
  engine_settings s = settings(68, 0, cudagraph_mode::full);
  s.max_model_len = 128;
  const step_spec spec{step_kind::dummy, 136, false, 0};
  const engine_step fixed = realise_step(s, spec, {}, {});
  EXPECT_EQ(fixed.num_reqs_padded, 68);
  EXPECT_EQ(fixed.b.query_lens, std::vector<int64_t>(68, 2));
  EXPECT_EQ(fixed.b.seq_lens, std::vector<int64_t>(68, 128));
  EXPECT_EQ(fixed.graph_size, 136);
  const engine_step bug = realise_step(s, spec, {}, {false, true, false});
  EXPECT_EQ(bug.b.seq_lens, std::vector<int64_t>(68, 136));
  const engine_step small =
      realise_step(settings(4, 0, cudagraph_mode::full), {step_kind::dummy, 10, false, 0}, {}, {});
  EXPECT_EQ(small.b.query_lens, (std::vector<int64_t>{2, 2, 2, 4}));
  // Before vLLM #19171: one metadata row per token, past max_num_seqs.
  const engine_step rows =
      realise_step(settings(8), {step_kind::dummy, 16, true, 0}, {}, {true, false, false});
  EXPECT_EQ(rows.num_reqs_padded, 16);
}

// k = 3 after a verify batch of 2 requests of 100 tokens: pass 1 reuses the verify metadata (8 q
// rows), passes 2.. run one token per request with seq_lens one longer per pass; the mutant keeps
// query_start [0, 4, 8] and max_query_len 4 while q has 2 rows.
TEST(Steps, DraftPasses) {
  engine_settings s = settings(256, 3);
  s.max_model_len = 101;
  const batch verify = uniform(2, 100, 4);
  const engine_step p1 = realise_step(s, {step_kind::draft, 0, false, 1}, verify, {});
  EXPECT_EQ(p1.query_start, (std::vector<int64_t>{0, 4, 8}));
  EXPECT_EQ(p1.q_rows, 8);
  const engine_step p2 = realise_step(s, {step_kind::draft, 0, false, 2}, verify, {});
  EXPECT_EQ(p2.query_start, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(p2.max_query_len, 1);
  EXPECT_EQ(p2.q_rows, 2);
  EXPECT_EQ(p2.b.seq_lens, (std::vector<int64_t>{101, 101}));
  const engine_step p3 = realise_step(s, {step_kind::draft, 0, false, 3}, verify, {});
  EXPECT_EQ(p3.b.seq_lens, (std::vector<int64_t>{101, 101}));  // clamped to max_model_len
  const engine_step bug = realise_step(s, {step_kind::draft, 0, false, 2}, verify, {false, false, true});
  EXPECT_EQ(bug.query_start, (std::vector<int64_t>{0, 4, 8}));
  EXPECT_EQ(bug.max_query_len, 4);
  EXPECT_EQ(bug.q_rows, 2);
  // Pass 0, the capture's one-token draft pass: [0, 1, 2] at the verify's seq_lens; the mutant
  // keeps [0, 4, 8] over 2 rows (vllm-musa #198).
  const engine_step p0 = realise_step(s, {step_kind::draft, 0, false, 0}, verify, {});
  EXPECT_EQ(p0.query_start, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(p0.max_query_len, 1);
  EXPECT_EQ(p0.b.seq_lens, (std::vector<int64_t>{100, 100}));
  const engine_step bug0 = realise_step(s, {step_kind::draft, 0, false, 0}, verify, {false, false, true});
  EXPECT_EQ(bug0.query_start, (std::vector<int64_t>{0, 4, 8}));
  EXPECT_EQ(bug0.q_rows, 2);
}

// FULL mixed graphs (cudagraph_mode full) warm up every capture size as a non-uniform dummy; the
// separate decode routine (full_decode_only, full_and_piecewise) the sizes q..q * max_num_seqs as
// uniform dummies; PIECEWISE builds no attention metadata.
TEST(Steps, DummyStepsOfTheSettings) {
  const auto full = dummy_steps_of(settings(4, 0, cudagraph_mode::full));
  ASSERT_EQ(full.size(), 4u);  // 1, 2, 4, 8
  EXPECT_FALSE(full.back().uniform);
  EXPECT_EQ(full.back().tokens, 8);
  const auto decode = dummy_steps_of(settings(4));
  ASSERT_EQ(decode.size(), 3u);  // 1, 2, 4: 8 is above max_num_seqs
  EXPECT_TRUE(decode.back().uniform);
  EXPECT_TRUE(dummy_steps_of(settings(4, 0, cudagraph_mode::piecewise)).empty());
}

// cdiv(max_model_len, block_size) rounded up to a multiple of 128 // gcd(128, block_size) (vLLM
// #50302): 4096 / 16 = 256, 1024 / 16 = 64, 1000 -> 63 -> 64, 128 / 16 = 8; block size 5 aligns
// to 128 blocks.
TEST(Steps, BlockTableWidth) {
  engine_settings s;
  for (auto [mml, bs, width] : {std::tuple{4096, 16, 256},
                                {1024, 16, 64},
                                {1000, 16, 64},
                                {128, 16, 8},
                                {100, 5, 128},
                                {4096, 32, 128}}) {
    s.max_model_len = mml;
    EXPECT_EQ(block_table_width(s, bs), width) << mml << " / " << bs;
  }
}

}  // namespace
}  // namespace headroom
