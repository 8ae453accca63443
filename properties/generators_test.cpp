// Properties of the generators themselves: every generated case is valid as built (nothing is
// filtered or discarded), stays inside the simulator's budget, and every shrink candidate is
// valid and strictly smaller; sampling by (seed, index) is deterministic; the shrinker reaches the
// documented minimum for the regression.
#include <algorithm>
#include <map>
#include <set>

#include "generators/batch_gen.hpp"
#include "generators/case_gen.hpp"
#include "generators/geometry_gen.hpp"
#include "generators/shrink.hpp"
#include "properties/support/prop_check.hpp"
#include "properties/support/profiles.hpp"
#include "tests/support/laguna.hpp"

namespace headroom {
namespace {

const props::budget budget{1000, 0, 100};

TEST(Generators, CasesAreValidAndWithinBudget) {
  props::check(
      [] {
        const generators::case_profile p = props::everything();
        const check_case c = *generators::raw_cases(p);
        RC_ASSERT(generators::is_valid(c));
        const int64_t work = generators::batch_work(c.b, generators::token_cost_of(c));
        RC_CLASSIFY(work > p.max_work / 2, "over half the work budget");
        // Within the budget, except that a request never shrinks below 1 token (decode) or a 2 x 2
        // query-by-sequence block (prefill).
        RC_ASSERT(work <= p.max_work + 4 * c.b.num_seqs() * generators::token_cost_of(c));
        RC_TAG(c.b.is_decode() ? "decode" : "prefill or mixed", to_string(c.be), to_string(c.layout));
      },
      budget);
}

TEST(Generators, ShrinkCandidatesAreValidAndSmaller) {
  props::check(
      [] {
        const check_case c = *generators::raw_cases(props::everything());
        const auto key = generators::shrink_key(c);
        const auto cands = generators::shrink_candidates(c);
        RC_CLASSIFY(cands.empty(), "already minimal");
        for (const auto& x : cands) {
          RC_ASSERT(generators::is_valid(x));
          RC_ASSERT(generators::shrink_key(x) < key);
        }
      },
      {300, 0, 100});
}

// The size key measures a batch by its total query and sequence tokens (positions 4 and 5), not by
// its longest request: shortening any one request is progress, so a shrink reaches a batch whose
// every request is short. Pinned on a hand-built case: lengths {100, 50}, queries {1, 1}.
TEST(Generators, SizeKeyCountsEveryRequestsTokens) {
  check_case c = generators::sample_case(props::everything(), 7, 0);
  c.b = {{100, 50}, {1, 1}};
  const auto key = generators::shrink_key(c);
  EXPECT_EQ(key.at(3), 2);
  EXPECT_EQ(key.at(4), 2);
  EXPECT_EQ(key.at(5), 150);
  check_case shorter = c;
  shorter.b.seq_lens[1] = 25;  // the shorter request, shorter still: the longest is unchanged
  EXPECT_LT(generators::shrink_key(shorter), key);
}

// The profile's KV-cache layouts: both by default (each about half the cases), one when pinned.
TEST(Generators, CasesDrawTheProfilesKvLayouts) {
  auto p = props::everything();
  int packed = 0;
  for (uint64_t i = 0; i < 200; ++i) packed += generators::sample_case(p, 5, i).layout == kv_layout::packed;
  EXPECT_GT(packed, 60);
  EXPECT_LT(packed, 140);
  for (kv_layout k : {kv_layout::separate, kv_layout::packed}) {
    p.kv_layouts = {k};
    for (uint64_t i = 0; i < 50; ++i) EXPECT_EQ(generators::sample_case(p, 5, i).layout, k);
  }
}

// Head sizes above 64, the ones the case's backend runs (large_head_sizes_of: FA3 up to 256,
// FlashInfer 128 / 256 / 512, Triton 80..512), in a share of the cases that keeps the simulator's
// rate (about one draw in six: a case has a large model-wide or alternative size in 15-45%).
TEST(Generators, CasesDrawLargeHeadSizesTheBackendRuns) {
  const auto p = props::everything();
  const std::map<backend, std::set<int64_t>> runs = {{backend::triton, {80, 96, 128, 192, 256, 512}},
                                                     {backend::flashinfer, {128, 256, 512}},
                                                     {backend::fa3, {80, 96, 128, 192, 256}}};
  std::map<backend, int> cases, large;
  std::map<backend, std::set<int64_t>> seen;
  for (uint64_t i = 0; i < 1500; ++i) {
    const check_case c = generators::sample_case(p, 11, i);
    bool any = false;
    std::vector<int64_t> sizes = {c.model.head_size};
    for (const auto& l : c.model.layers)
      if (l.kind != attn_kind::none) sizes.push_back(l.head_size);
    for (int64_t d : sizes) {
      if (d <= 64) continue;
      any = true;
      seen[c.be].insert(d);
      EXPECT_TRUE(runs.at(c.be).count(d)) << to_string(c.be) << " drew " << d;
    }
    ++cases[c.be], large[c.be] += any;
  }
  for (backend be : {backend::triton, backend::flashinfer, backend::fa3}) {
    SCOPED_TRACE(to_string(be));
    EXPECT_EQ(seen[be], runs.at(be));  // every size the backend runs is drawn
    ASSERT_GT(cases[be], 100);
    EXPECT_GT(large[be], cases[be] * 15 / 100);
    EXPECT_LT(large[be], cases[be] * 45 / 100);
  }
  auto off = p;
  off.large_head_sizes = false;
  for (uint64_t i = 0; i < 200; ++i) EXPECT_LE(generators::sample_case(off, 11, i).model.head_size, 64);
}

// A failure that needs the config's head size inside FA3's one-token causal rule (64 < D <= 128)
// and a layer's outside it shrinks to the smallest drawn size that still fails: config 128 and a
// full layer of 256 end at config 80 (the next drawn size down, 64, is outside) and layer 1.
TEST(Generators, HeadSizesShrinkDownTheDrawnSizes) {
  model_geometry m = testing::uniform(1, 4, 1, 256);  // one full layer of 256
  m.head_size = 128;
  check_case c = make_case(m, 1, backend::fa3, policy::per_layer, grouping::heads, true, 16, 0);
  c.b = {{100}, {1}};
  ASSERT_TRUE(generators::is_valid(c));
  const auto inside = [](int64_t d) { return d > 64 && d <= 128; };
  const auto crosses = [&](const check_case& x) {
    for (const auto& l : x.model.layers)
      if (l.kind == attn_kind::full && inside(l.head_size) != inside(x.model.head_size)) return true;
    return false;
  };
  const auto r = generators::shrink_greedy(c, crosses);
  EXPECT_EQ(r.c.model.head_size, 80);
  ASSERT_EQ(r.c.model.layers.size(), 1u);
  EXPECT_EQ(r.c.model.layers[0].head_size, 1);
  EXPECT_EQ(generators::next_smaller_head_size(128), 96);
  EXPECT_EQ(generators::next_smaller_head_size(81), 80);
  EXPECT_EQ(generators::next_smaller_head_size(4), 0);
}

TEST(Generators, SamplingIsDeterministic) {
  const auto p = props::everything();
  for (uint64_t i = 0; i < 50; ++i)
    EXPECT_EQ(generators::sample_case(p, 42, i), generators::sample_case(p, 42, i));
  EXPECT_FALSE(generators::sample_case(p, 42, 0) == generators::sample_case(p, 43, 0));
}

}  // namespace
}  // namespace headroom
