// The domain shrinker over check_case, shared by RapidCheck (as the generated value's shrink tree)
// and the fuzzer (walked greedily). Candidates go toward fewer layers, TP 1 with the same per-rank
// numbers, fewer and shorter requests, smaller and more uniform head counts, smaller head sizes,
// full attention and default engine options. Every candidate is valid (validate + to_rank pass).
//
// Why a dedicated shrinker instead of RapidCheck's structural shrinks: the fuzzer and the corpus
// shrink cases that no generator produced (real configs, replayed files, GPU findings); shrinks of
// a mapcat-built value re-generate the dependent part and rarely keep a failure; and "minimal"
// here is a domain notion (one overflowing group, the fewest layers and requests).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <rapidcheck.h>

#include "core/check/case.hpp"

namespace headroom::generators {

// Lexicographic size: attention layers, layers, tp, requests, query and sequence lengths, heads,
// distinct heads, kv heads, head sizes, sliding layers, Triton's max_num_seqs, the step (a dummy's
// tokens, a draft's pass, speculative tokens), non-default options and engine settings.
// Non-negative integers, so every descent that decreases it terminates.
std::vector<int64_t> shrink_key(const check_case& c);

// Valid candidates with a smaller key, most aggressive first. Empty when nothing smaller exists.
std::vector<check_case> shrink_candidates(const check_case& c);
rc::Seq<check_case> shrink_seq(const check_case& c);

// True when the case passes the checks run_case makes before running anything.
bool is_valid(const check_case& c);

struct shrink_result {
  check_case c;
  int steps = 0;  // accepted candidates
  int evals = 0;  // predicate calls
};

// Greedy descent: take the first candidate for which still_fails holds, repeat until no candidate
// does or max_evals predicate calls were made. Candidates `allowed` refuses (when given) are
// skipped without a call.
shrink_result shrink_greedy(const check_case& c, const std::function<bool(const check_case&)>& still_fails,
                            int max_evals = 2000,
                            const std::function<bool(const check_case&)>& allowed = nullptr);

// The same case with layers named model.layers.0 .. n-1 (a tidier file; the fuzzer keeps it when
// the failure survives the renaming).
check_case renumbered(const check_case& c);

}  // namespace headroom::generators
