// The engine as a case sees it, for properties that state what must hold of it: core's engine
// (make_engine), each builder's resolved heads, the plans a builder makes for a batch, what each
// layer's run needs of them (the formulas), and the simulator target.
#pragma once

#include <memory>
#include <vector>

#include "core/check/case.hpp"
#include "core/check/executor.hpp"
#include "core/check/plans.hpp"

namespace headroom::props {

// The builder's heads for a group under the case's policy.
head_resolution resolution_of(const check_case& c, const engine& e, const attention_group& g);

// The distinct layers (by head count) of a group, as the checker runs them.
std::vector<const rank_layer*> layers_of(const engine& e, const attention_group& g);

// One plan and the part of the batch it serves (FlashInfer: decode requests to the decode
// planner, the others to the prefill planner; Triton: the whole batch): core's plan_parts.
std::vector<planned_part> plans_for(const check_case& c, const engine& e, const attention_group& g,
                                    int64_t builder_heads, const batch& b);

// What a layer's run needs of the plan's buffers, by the formulas: core's model_observation.
std::vector<buffer_need> needs_of(const planned_part& p, const rank_layer& l, dtype out);

// The simulator target.
std::unique_ptr<executor> make_sim();

// True when the case has layers whose heads differ within one KV-cache spec (the bug's habitat).
bool heterogeneous(const check_case& c);

}  // namespace headroom::props
