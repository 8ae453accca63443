// DeepSeek-V4's indexer on SM90 (docs/catalogue.md C7): per request the compressed KV length
// seq_len // compress_ratio, fed to DeepGEMM's paged-MQA-logits metadata scheduler
// (sm90_paged_mqa_logits_metadata). The scheduler keeps a prefix sum of ceil(len / SPLIT_KV) over
// align(B, 32) entries in shared memory, splits the total over the SMs and binary-searches each
// SM's first request; when every length is 0 the search ends at q_idx = B and reads prefix_sum[B],
// one past the array when B is a multiple of 32 (capture sizes always are).
#pragma once

#include <cstdint>
#include <vector>

#include "core/backends/buffers.hpp"
#include "core/engine/steps.hpp"

namespace headroom {

inline constexpr int64_t mqa_batch_align = 32;   // align(batch_size, 32)
inline constexpr int64_t mqa_split_kv = 256;     // SPLIT_KV: any positive value gives the same zeros
inline constexpr int64_t mqa_num_sms = 132;      // kNumSMs (H100 / H200)
inline constexpr int64_t mqa_max_batch = 16384;  // largest batch the kernel body's shared array holds

// Per-request work after the layer's compression: seq_len // ratio, clamped to at least 1 for a
// request with tokens (the fix); `unclamped`: left at 0 (the mutant). Padded rows (seq_len 0)
// carry no work either way.
std::vector<int32_t> compressed_lens(const engine_step& st, int64_t ratio, bool unclamped);

struct mqa_meta_plan {
  int64_t batch = 0, aligned = 0;
  std::vector<int32_t> context_lens;  // batch entries
  // shared:prefix_sum (aligned uint32 entries of shared memory), schedule_metadata
  // ((mqa_num_sms + 1) x 2 int32: each SM's first request and kv split).
  std::vector<buffer_plan> buffers;
};

// Throws input_error (field "batch") for a batch above mqa_max_batch.
mqa_meta_plan plan_mqa_meta(const std::vector<int32_t>& context_lens);

// What the scheduler touches: the prefix sum up to the largest index its search reads (B, one
// past the array, when every length is 0 and B % 32 == 0), and the whole schedule.
std::vector<buffer_need> mqa_meta_needs(const mqa_meta_plan& p);

}  // namespace headroom
