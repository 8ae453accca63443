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

// Estimates for the decode kernel at D = 128, bf16: group size 1 uses a 4-deep KV tile per bdx
// (the largest shared tile), larger groups 1-deep tiles and are limited by registers. The measured
// table (blocks_by_head) comes from tools/flashinfer/occupancy.cu on an H200; until it is filled the
// estimates stand. Overridable per case.
device_params h200_params() {
  device_params d;
  d.num_sms = 132;
  d.blocks_per_sm = {{1, 3}};
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
