// Internal to the shrinker: the candidate families (shrink.hpp filters them by the size key).
#pragma once

#include <cstdint>
#include <vector>

#include "core/check/case.hpp"

namespace headroom::generators {

// Fewer layers, TP 1, smaller / more uniform heads, smaller head sizes, full attention.
void model_candidates(const check_case& c, std::vector<check_case>& out);
// Fewer requests, shorter sequences, decode instead of prefill.
void batch_candidates(const check_case& c, std::vector<check_case>& out);
// Default engine options, smaller max_num_seqs, bf16, seed 0.
void option_candidates(const check_case& c, std::vector<check_case>& out);

}  // namespace headroom::generators
