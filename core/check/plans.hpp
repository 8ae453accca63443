// The plans a backend's builder makes for one batch of one attention group (SPEC.md 4-6): Triton
// plans once per group; FlashInfer plans per batch and sends decode requests to its decode wrapper
// and the rest to its prefill wrapper, so a mixed batch yields two parts.
#pragma once

#include <vector>

#include "core/check/case.hpp"
#include "core/check/executor.hpp"
#include "core/engine/engine.hpp"

namespace headroom {

struct planned_part {
  any_plan plan;
  batch b;  // the requests this plan serves
};

// KV heads the builder plans with: the group spec's, or the model-wide count for Triton when
// case.triton.kv_from_group_spec is off (the version of the bug).
int64_t builder_kv_heads(const check_case& c, const rank_geometry& rg, const attention_group& ag);

std::vector<planned_part> plan_parts(const check_case& c, const rank_geometry& rg,
                                     const attention_group& ag, int64_t builder_heads,
                                     const batch& b);

}  // namespace headroom
