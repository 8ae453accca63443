// Token offsets into q and the output (docs/catalogue.md C6): a Triton-style kernel addresses
// element (token, head, d) of a [tokens][heads][head_size] tensor as token * (heads * head_size) +
// head * head_size + d. Computed in 32 bits (SGLang #20389, fla #1080) that wraps once the tensor
// passes 2^31 elements; the fixed kernels use 64 bits. Tensors that large cannot be simulated, so
// the sim and gpu targets run a probe body (kernels/offset_probe.hpp) that evaluates the kernels'
// own offset expression for the last element of the step's last token.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backends/buffers.hpp"
#include "core/model/geometry.hpp"

namespace headroom {

struct offset_probe_plan {
  int64_t q_rows = 0;          // the step's tokens: the probe evaluates token q_rows - 1
  bool int32_offsets = false;  // the kernels' offsets are 32-bit (the mutant)
  std::vector<buffer_plan> buffers;  // probe_offset: the computed offset (one int64)
};

offset_probe_plan plan_offset_probe(int64_t q_rows, bool int32_offsets);

// The largest linear offset into q / output of a layer at q_rows tokens (checked 64-bit).
int64_t largest_token_offset(const offset_probe_plan& p, const rank_layer& l);

// Whether the kernels' offset arithmetic wraps for this layer: 32-bit offsets and the largest
// offset past 2^31 - 1.
bool token_offset_wraps(const offset_probe_plan& p, const rank_layer& l);

}  // namespace headroom
