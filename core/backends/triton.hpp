// Triton unified attention (vLLM TRITON_ATTN), docs/engines.md §5: the builder's 3D-path buffers and what
// the segmented decode kernel writes into them with the layer's real head count.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backends/batch.hpp"
#include "core/backends/buffers.hpp"
#include "core/engine/settings.hpp"
#include "core/model/geometry.hpp"

namespace headroom {

inline constexpr int64_t triton_segments = 16;        // softmax segments per sequence (NUM_SEGMENTS)
inline constexpr int64_t triton_tile = 16;            // TILE_SIZE for 16-bit KV in 3D decode
inline constexpr int64_t triton_tile_fp8 = 32;        // ... with an fp8 cache (q quantised to fp8)
inline constexpr int64_t triton_thr_numerator = 128;  // thr = 128 // KV

struct triton_options {
  bool cap_max_num_seqs = false;  // SGLang's rule, thr in 1..max_num_seqs (vLLM's builder has none)
  bool snap_to_capture = true;    // FULL CUDA-graph modes: thr snaps to the nearest capture size
  bool operator==(const triton_options&) const = default;
};

// seq_threshold_3D: 128 // kv heads, snapped to the nearest capture size (ties to the smaller) when
// the engine captures FULL graphs; capped at max_num_seqs only with cap_max_num_seqs.
int64_t triton_threshold(int64_t kv_heads_b, const triton_options& o, const engine_settings& s);

struct triton_plan {
  int64_t thr = 0;
  int64_t builder_heads = 0;     // H_b
  int64_t builder_kv_heads = 0;  // KV_b used for thr
  int64_t head_size_padded = 0;  // Dp_b
  bool int32_offsets = false;    // q / output offsets in 32 bits (the int32-token-offsets mutant)
  // TILE_SIZE_DECODE: _get_tile_size gives 16 for q of 2+ bytes, 32 for 1 (an fp8 cache on CUDA:
  // Attention.forward quantises q, query_quant); segments are whole tiles.
  int64_t decode_tile = triton_tile;
  std::vector<buffer_plan> buffers;  // segm_output, segm_max, segm_expsum (fp32)
};

triton_plan plan_triton(int64_t builder_heads, int64_t builder_kv_heads, int64_t head_size,
                        const triton_options& o, const engine_settings& s = {});

// 3D path: pure decode with num_seqs <= thr. Otherwise the 2D path touches no buffer.
bool triton_uses_3d(const triton_plan& p, const batch& b);
// Segment s of a sequence of length L is active iff s * ceil(L / (16*TILE)) * TILE < L.
bool triton_segment_active(int64_t s, int64_t seq_len, int64_t tile = triton_tile);
// The decode tile of a cache (triton_tile, or triton_tile_fp8 for an fp8 one).
int64_t triton_decode_tile(kv_quant cache);

// Launch shape for the layer (BLOCK_M, BLOCK_Q, grids).
struct triton_shape {
  int64_t block_m = 0, block_q = 0;
  int64_t grid_x = 0, grid_y = 0, grid_z = 0;  // (T / BLOCK_Q + num_seqs, KV, 16)
  int64_t reduce_x = 0, reduce_y = 0;          // (T, H)
};
triton_shape triton_launch_shape(const rank_layer& l, const batch& b);

// Largest element index + 1 the 3D kernel writes into each buffer for this layer and batch,
// computed with checked 64-bit arithmetic. Empty when the batch takes the 2D path.
std::vector<buffer_need> triton_needs(const triton_plan& p, const rank_layer& l, const batch& b);

}  // namespace headroom
