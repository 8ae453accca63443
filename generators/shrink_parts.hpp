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
// The step toward a forward, smaller graphs and passes, settings and compression back to defaults.
void step_candidates(const check_case& c, std::vector<check_case>& out);
// The step's size for the key: 0 for a forward, else 1 + its tokens or pass; plus speculative tokens.
int64_t step_size(const check_case& c);
// Engine settings and compression ratios away from their defaults.
int64_t non_default_engine(const check_case& c);

}  // namespace headroom::generators
