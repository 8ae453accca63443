// The campaign's pins over the generators' cases (fuzz_campaign.hpp): generators::pinned_settings
// pins vLLM's settings and the mirror's own inside the generators; SGLang's (sglang_settings), which
// it has no field for, are written over each sampled case here, and the shrinker's candidates must
// keep them as they keep the others.
#include "cli/fuzz_campaign.hpp"

#include "generators/shrink.hpp"

namespace headroom::cli {

namespace gen = headroom::generators;

check_case sample_fuzz_case(const fuzz_options& o, uint64_t index) {
  check_case c = gen::sample_case(o.profile, o.seed, index);
  pin(o.sglang_pins, c.engine);
  return c;
}

bool keeps_pins(const fuzz_options& o, const check_case& c) {
  return gen::holds(o.profile.pins, c) && holds(o.sglang_pins, c.engine);
}

// The steps of generators::shrink_failure, with the SGLang pins in the candidates' test.
gen::counterexample shrink_fuzz_failure(const fuzz_options& o, const check_case& c, const report& r,
                                        executor& ex) {
  if (o.sglang_pins.empty()) return gen::shrink_failure(c, r, ex, gen::default_shrink_evals, o.profile.pins);
  gen::counterexample f;
  f.original = c;
  f.kind = gen::primary_failure(r).value_or(gen::failure_kind{});
  auto still_fails = [&](const check_case& cand) {
    return gen::has_failure(gen::run_guarded(cand, ex), f.kind);
  };
  auto pinned = [&](const check_case& cand) { return keeps_pins(o, cand); };
  const gen::shrink_result s = gen::shrink_greedy(c, still_fails, gen::default_shrink_evals, pinned);
  f.shrunk = s.c;
  f.shrink_steps = s.steps;
  f.shrink_evals = s.evals;
  const check_case tidy = gen::renumbered(f.shrunk);
  if (!(tidy == f.shrunk) && still_fails(tidy)) f.shrunk = tidy;
  f.shrunk_report = gen::run_guarded(f.shrunk, ex);
  f.signature = gen::signature(f.shrunk, f.shrunk_report);
  return f;
}

}  // namespace headroom::cli
