// A metadata run packaged for its body (docs/catalogue.md C3, C5, C6, C7): the plan's host values
// uploaded into simulator memory, its buffers laid out at the PLAN's capacities (the persistent
// buffers an engine allocates once), and the family's params. These bodies need no attention
// inputs and do not depend on the element type; the simulator runs the package as it is, the GPU
// target sends the same memory and params to a device (targets/gpu/request.hpp).
#pragma once

#include <variant>

#include "core/backends/plan.hpp"
#include "core/model/geometry.hpp"
#include "core/sim/memory.hpp"
#include "kernels/families.hpp"

namespace headroom {

using meta_params =
    std::variant<fa3_scheduler_params, request_meta_params, mqa_metadata_params, offset_probe_params>;

// The params of a plan no attention body runs (is_attention_plan false); `l` is the layer the
// offset probe evaluates. Throws std::invalid_argument for an attention plan.
meta_params make_meta_params(sim::memory& m, const any_plan& plan, const rank_layer& l);

}  // namespace headroom
