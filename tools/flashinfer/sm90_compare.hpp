// planner_compare --sm90: FlashInfer's PrefillSM90Plan (fi_side.cu) against headroom's mirror
// (core/backends/fi_prefill_sm90.cpp) on random inputs from a stream of their own (sm90_compare.cpp).
#pragma once

#include <cstdint>

namespace planner_compare {

// `inputs` random inputs from `seed`; prints the counts, exit status 1 on any disagreement.
int run_sm90(int64_t inputs, uint64_t seed);
// Two fixed inputs through both sides, not compared: 0 when both answer each.
int self_test_sm90();

}  // namespace planner_compare
