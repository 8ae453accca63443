// DeepGEMM's SM90 paged-MQA-logits metadata scheduler (sm90_paged_mqa_logits_metadata, as shipped
// before its empty-batch guard; docs/catalogue.md C7) as a kernel body: one warp.
//   1. prefix_sum[i] = sum over j <= i of ceil(context_lens[j] / SPLIT_KV), for the align(B, 32)
//      entries of a SHARED array (entries past B count 0). DeepGEMM scans with warp shuffles; here
//      each lane writes its entries and lane 0 accumulates them (same values, same array).
//   2. total = prefix_sum[last]; SM s starts at segment s * (total / SMs) + max(0, s - pivot); a
//      binary search finds its request q_idx = the first i with prefix_sum[i] > seg_start, and the
//      request's segments prefix_sum[q_idx] - prefix_sum[q_idx - 1] are read.
// When every length is 0 the predicate holds everywhere, q_idx = B, and prefix_sum[B] is read:
// past the array when B is a multiple of 32 (the simulator's shared-memory bounds check and the
// device-checked build see it; on the GPU's production build it reads past the block's dynamic
// shared memory, DeepGEMM's illegal memory access), in the zero padding otherwise.
#pragma once

#include <cstdint>

#include "core/sim/context.hpp"
#include "core/sim/device_types.hpp"

namespace headroom {

inline constexpr int64_t mqa_kernel_max_batch = 16384;  // = mqa_max_batch (core/backends/mqa_meta.hpp)

struct mqa_metadata_params {
  buffer_ref<const int32_t> context_lens;  // B entries: the compressed KV length per request
  buffer_ref<int32_t> schedule;            // (num_sms + 1) x 2: first request and kv split per SM
  int64_t batch = 0, aligned = 0;          // B and align(B, 32)
  int64_t split_kv = 256, num_sms = 132;
};

struct mqa_metadata {
  using params = mqa_metadata_params;
  struct shared_storage {
    uint32_t prefix_sum[mqa_kernel_max_batch];
  };
  static constexpr int lanes = 32;
  static launch_dim grid(const params&) { return {1, 1, 1}; }
  static launch_dim block(const params&) { return {lanes, 1, 1}; }
  static std::size_t shared_bytes(const params& p) { return static_cast<std::size_t>(p.aligned) * 4; }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const auto lens = ctx.global(p.context_lens);
    const auto out = ctx.global(p.schedule);
    const auto ps = ctx.template shared<1>(s.prefix_sum, p.aligned, "prefix_sum");
    ctx.threads([&](const thread_idx& t) {
      for (int64_t i = t.x; i < p.aligned; i += lanes) {
        const int64_t len = i < p.batch ? lens.load(i) : 0;
        ps.store(i, static_cast<uint32_t>((len + p.split_kv - 1) / p.split_kv));
      }
    });
    ctx.sync();
    ctx.threads([&](const thread_idx& t) {
      if (t.x != 0) return;
      uint32_t sum = 0;
      for (int64_t i = 0; i < p.aligned; ++i) ps.store(i, sum += ps.load(i));
    });
    ctx.sync();
    ctx.threads([&](const thread_idx& t) {
      const int64_t total = p.aligned > 0 ? ps.load(p.aligned - 1) : 0;
      const int64_t q = total / p.num_sms, r = total % p.num_sms, pivot = p.num_sms - r;
      for (int64_t sm = t.x; sm < p.num_sms; sm += lanes) {
        const int64_t seg_start = sm * q + (sm > pivot ? sm - pivot : 0);
        int64_t lo = 0, hi = p.batch;
        while (lo < hi) {
          const int64_t mid = (lo + hi) / 2;
          if (ps.load(mid) <= seg_start)
            lo = mid + 1;
          else
            hi = mid;
        }
        const int64_t q_idx = lo;  // B when every length is 0
        const int64_t before = q_idx == 0 ? 0 : ps.load(q_idx - 1);
        const int64_t num_segs = static_cast<int64_t>(ps.load(q_idx)) - before;
        const int64_t offset = seg_start - before;
        out.store(sm * 2, static_cast<int32_t>(q_idx));
        out.store(sm * 2 + 1, static_cast<int32_t>(num_segs > 0 ? offset % num_segs : 0));
      }
      if (t.x == 0) {
        out.store(p.num_sms * 2, static_cast<int32_t>(p.batch));
        out.store(p.num_sms * 2 + 1, 0);
      }
    });
  }
};

}  // namespace headroom
