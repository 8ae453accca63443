// Token offsets into q and the output (docs/catalogue.md C6): a Triton-style kernel addresses
// element (token, head, d) of a [tokens][heads][head_size] view as token * row_stride + head *
// head_size + d. The output is contiguous (row_stride = H_q * D_v). q is, in vLLM, a view of the
// fused qkv projection (qkv.split(..., dim=-1), then view(-1, H_q, D): no copy), so its token
// stride is the projection's row, (H_q + H_kv) * D + H_kv * D_v; unified_attention multiplies the
// token by q.stride(0). Computed in 32 bits (SGLang #20389, fla #1080) an offset wraps once it
// passes 2^31 - 1; the fixed kernels use 64 bits. Tensors that large cannot be simulated, so the
// sim and gpu targets run a probe body (kernels/offset_probe.hpp) that evaluates the kernels' own
// offset expression for the last element of the step's last token, of q or the output, whichever
// ends further.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backends/buffers.hpp"
#include "core/model/geometry.hpp"

namespace headroom {

struct offset_probe_plan {
  int64_t q_rows = 0;                // the step's tokens: the probe evaluates token q_rows - 1
  bool int32_offsets = false;        // the kernels' offsets are 32-bit (the mutant)
  bool fused_qkv = false;            // q is a view of the fused qkv projection (vLLM); else contiguous
  std::vector<buffer_plan> buffers;  // probe_offset: the computed offset (one int64)
};

offset_probe_plan plan_offset_probe(int64_t q_rows, bool int32_offsets, bool fused_qkv = false);

// q's token stride in elements: H_q * D, or (H_q + H_kv) * D + H_kv * D_v for a fused-qkv view.
int64_t q_row_stride(const offset_probe_plan& p, const rank_layer& l);

// The largest linear offsets at q_rows tokens (checked 64-bit): q's (T - 1) * row stride + H_q * D
// - 1, the output's T * H_q * D_v - 1, and the larger of the two.
int64_t largest_q_offset(const offset_probe_plan& p, const rank_layer& l);
int64_t largest_output_offset(const offset_probe_plan& p, const rank_layer& l);
int64_t largest_token_offset(const offset_probe_plan& p, const rank_layer& l);

// Whether the kernels' offset arithmetic wraps for this layer: 32-bit offsets and the largest
// offset past 2^31 - 1.
bool token_offset_wraps(const offset_probe_plan& p, const rank_layer& l);

}  // namespace headroom
