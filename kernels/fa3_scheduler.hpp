// FlashAttention-3's scheduler-metadata preparation (docs/catalogue.md C3) as a kernel body: the
// layout mha_fwd_get_scheduler_metadata writes for a batch of b requests (core/backends/fa3.hpp),
// one thread per slot, into the builder's persistent buffer. With r = round_up(b, 4):
//   [0, r)                  prepare_varlen: one entry per request, from query_start_loc and
//                           seq_lens (the model runner's persistent buffers)
//   [r, 2r)                 dynamic splits per request (when dynamic split is on)
//   [(nvec-1) r, nvec r)    heads kept in L2 (when head swizzle is on)
//   nvec r                  the tile-count semaphore, LAST (SM90)
// As FA3's prepare_varlen_num_blocks_kernel, it writes entries b..r-1 of no vector (the padding
// keeps what was there): the write set is FA3's, seen on FA3's own kernel by the engine target
// (tests/engine_target/fa3_driver_test.cpp). The values are not all FA3's (its first vector holds
// the packed query length, its last the heads of its L2 estimate) and no check reads them.
// A buffer shorter than 1 + nvec r is written past its end: the out-of-bounds write the simulator
// and the device-checked build observe (vLLM #33841's illegal memory access).
#pragma once

#include <cstdint>

#include "kernels/item_grid.hpp"

namespace headroom {

struct fa3_scheduler_params {
  buffer_ref<int32_t> metadata;           // scheduler_metadata (the plan's capacity)
  buffer_ref<const int32_t> query_start;  // query_start_loc: max_num_seqs + 1 entries
  buffer_ref<const int32_t> seq_lens;     // seq_lens: max_num_seqs entries
  int64_t batch = 0, rounded = 0, nvec = 1;
  int64_t num_splits = 1;  // the resolved split count
  bool dynamic_split = false, head_swizzle = false;
};

struct fa3_scheduler : item_grid {
  using params = fa3_scheduler_params;
  static constexpr int64_t block_tokens = 128;  // kBlockM / kBlockN

  HEADROOM_HOST_DEVICE static int64_t slots(const params& p) { return 1 + p.nvec * p.rounded; }
  static launch_dim grid(const params& p) { return grid_for(slots(p)); }
  static launch_dim block(const params&) { return block_for(); }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage&) const {
    const auto md = ctx.global(p.metadata);
    const auto qs = ctx.global(p.query_start);
    const auto sl = ctx.global(p.seq_lens);
    for_items(ctx, slots(p), [&](int64_t i) {
      if (i == p.nvec * p.rounded) return md.store(i, 0);  // the semaphore
      const int64_t vec = i / p.rounded, j = i % p.rounded;
      if (j >= p.batch) return;  // padding
      int64_t value = 1;         // heads in L2 (the swizzle's vector)
      if (vec == 0) {            // prepare_varlen: the m-blocks of a request that has keys
        const int64_t q_len = qs.load(j + 1) - qs.load(j);
        value = sl.load(j) > 0 ? (q_len + block_tokens - 1) / block_tokens : 0;
      } else if (vec == 1 && p.dynamic_split) {
        const int64_t n_blocks = (sl.load(j) + block_tokens - 1) / block_tokens;
        value = n_blocks < p.num_splits ? (n_blocks > 1 ? n_blocks : 1) : p.num_splits;
      }
      md.store(i, static_cast<int32_t>(value));
    });
  }
};

}  // namespace headroom
