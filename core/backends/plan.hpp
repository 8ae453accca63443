// Any backend's plan for one batch of one attention group, and the buffers it holds: the one place
// that knows every plan type (core/backends/triton.hpp, flashinfer.hpp; the engine-step metadata of
// fa3.hpp, request_meta.hpp, mqa_meta.hpp and the offset probe of offsets.hpp).
#pragma once

#include <variant>
#include <vector>

#include "core/backends/buffers.hpp"
#include "core/backends/fa3.hpp"
#include "core/backends/fi_prefill_sm90.hpp"
#include "core/backends/flashinfer.hpp"
#include "core/backends/mqa_meta.hpp"
#include "core/backends/offsets.hpp"
#include "core/backends/request_meta.hpp"
#include "core/backends/triton.hpp"

namespace headroom {

using any_plan = std::variant<triton_plan, fi_decode_plan, fi_prefill_plan, fa3_plan, request_meta_plan,
                              mqa_meta_plan, offset_probe_plan, fi_prefill_sm90_plan>;

// Plans of attention kernels (the rest are a step's metadata or the offset probe).
inline bool is_attention_plan(const any_plan& p) {
  return std::holds_alternative<triton_plan>(p) || std::holds_alternative<fi_decode_plan>(p) ||
         std::holds_alternative<fi_prefill_plan>(p) || std::holds_alternative<fi_prefill_sm90_plan>(p);
}

// The plan's buffers (capacities in bytes, element sizes as the kernels index them).
inline const std::vector<buffer_plan>& plan_buffers(const any_plan& p) {
  return std::visit([](const auto& x) -> const std::vector<buffer_plan>& { return x.buffers; }, p);
}

}  // namespace headroom
