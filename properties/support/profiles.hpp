// Case profiles the property suites share: the fix (per-layer), the regression (model-wide), and
// everything at once.
#pragma once

#include <vector>

#include "generators/case_gen.hpp"

namespace headroom::props {

inline generators::case_profile profile_of(std::vector<policy> policies,
                                           std::vector<grouping> groupings = {grouping::heads}) {
  generators::case_profile p;
  p.policies = std::move(policies);
  p.groupings = std::move(groupings);
  return p;
}

// The fix as vLLM ships it today: per-layer heads, attention groups keyed by heads.
inline generators::case_profile fixed() { return profile_of({policy::per_layer}); }
// The regression of #43241: builders sized from the model-wide count.
inline generators::case_profile regressed() { return profile_of({policy::model_wide}); }
// Every policy and grouping.
inline generators::case_profile everything() {
  return profile_of({policy::per_layer, policy::model_wide, policy::max},
                    {grouping::heads, grouping::legacy, grouping::proposer});
}

}  // namespace headroom::props
