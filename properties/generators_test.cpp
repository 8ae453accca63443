// Properties of the generators themselves: every generated case is valid as built (nothing is
// filtered or discarded), stays inside the simulator's budget, and every shrink candidate is
// valid and strictly smaller; sampling by (seed, index) is deterministic; the shrinker reaches the
// documented minimum for the regression.
#include "generators/batch_gen.hpp"
#include "generators/case_gen.hpp"
#include "generators/shrink.hpp"
#include "properties/support/prop_check.hpp"
#include "properties/support/profiles.hpp"

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

TEST(Generators, SamplingIsDeterministic) {
  const auto p = props::everything();
  for (uint64_t i = 0; i < 50; ++i)
    EXPECT_EQ(generators::sample_case(p, 42, i), generators::sample_case(p, 42, i));
  EXPECT_FALSE(generators::sample_case(p, 42, 0) == generators::sample_case(p, 43, 0));
}

}  // namespace
}  // namespace headroom
