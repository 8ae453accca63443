// The device facts FlashInfer's planners read (docs/engines.md §6, §7): the decode kernel's
// occupancy and FA2DetermineCtaTileQ's tile height, which probes compute capability and shared memory.
#include <algorithm>

#include "core/backends/flashinfer.hpp"

namespace headroom {

int64_t device_params::occupancy(int64_t group_size, int64_t head_size) const {
  if (auto it = blocks_by_head.find({group_size, head_size}); it != blocks_by_head.end()) return it->second;
  if (auto it = blocks_per_sm.find(group_size); it != blocks_per_sm.end()) return it->second;
  return default_blocks_per_sm;
}

// The decode kernel's blocks per SM on an H200, measured with FlashInfer's own
// BatchDecodeWithPagedKVCacheKernel (fb28d72, bf16, as its work estimation instantiates it) by
// tools/flashinfer/occupancy.cu, 2026-12-01 (docs/flashinfer-planner.md). Group sizes FlashInfer's
// decode kernel does not dispatch (5, 7) and other head sizes fall back to the default, the
// median of the table. Overridable per case.
device_params h200_params() {
  device_params d;
  d.num_sms = 132;
  d.blocks_by_head = {{{1, 64}, 6},  {{1, 128}, 6}, {{1, 256}, 6}, {{2, 64}, 9},   {{2, 128}, 9},
                      {{2, 256}, 9}, {{3, 64}, 9},  {{3, 128}, 9}, {{3, 256}, 10}, {{4, 64}, 8},
                      {{4, 128}, 8}, {{4, 256}, 8}, {{6, 64}, 9},  {{6, 128}, 8},  {{6, 256}, 6},
                      {{8, 64}, 9},  {{8, 128}, 9}, {{8, 256}, 4}};
  d.default_blocks_per_sm = 8;
  d.compute_major = 9;
  d.max_smem_per_block_optin = 232448;  // 227 KiB
  return d;
}

// head_dim is the VO head size; the QK size is the same here. Head sizes >= 512 split VO: 16 rows for
// short queries, 32 otherwise. Short packed queries (<= 16) take 16-row tiles when one Q tile and
// one KV step of the 1x4 warp layout fit the opt-in shared memory, else 64.
int64_t fi_cta_tile_q(int64_t packed_qo_len, int64_t head_dim, int64_t kv_dtype_bytes,
                      const device_params& d) {
  if (head_dim >= 512) return packed_qo_len <= 32 ? 16 : 32;
  if (packed_qo_len > 64 && head_dim < 256) return 128;
  if (d.compute_major < 8) return 64;
  if (packed_qo_len > 16) return 64;
  const int64_t q_tile_smem = 16 * head_dim * 2;
  const int64_t kv_step_smem = 2 * head_dim * 16 * 4 * kv_dtype_bytes;
  return q_tile_smem + kv_step_smem > d.max_smem_per_block_optin ? 64 : 16;
}

}  // namespace headroom
