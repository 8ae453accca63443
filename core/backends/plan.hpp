// Any backend's plan for one batch of one attention group, and the buffers it holds: the one place
// that knows every plan type (core/backends/triton.hpp, flashinfer.hpp).
#pragma once

#include <variant>
#include <vector>

#include "core/backends/buffers.hpp"
#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"

namespace headroom {

using any_plan = std::variant<triton_plan, fi_decode_plan, fi_prefill_plan>;

// The plan's buffers (capacities in bytes, element sizes as the kernels index them).
inline const std::vector<buffer_plan>& plan_buffers(const any_plan& p) {
  return std::visit([](const auto& x) -> const std::vector<buffer_plan>& { return x.buffers; }, p);
}

}  // namespace headroom
