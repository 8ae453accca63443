// Filling the per-request FlashInfer metadata of a padded batch (docs/catalogue.md C5) as a kernel
// body: the host computed paged_kv_indptr (padded + 1 entries) and paged_kv_last_page_len (padded
// entries); one thread per entry copies them into the builder's persistent buffers, as the engine
// copies its CPU values into the slice [:padded + 1] it binds to the CUDA-graph wrapper. Buffers
// sized for fewer rows than the padded batch are written past their end: the simulator and the
// device-checked build observe the out-of-bounds writes.
#pragma once

#include <cstdint>

#include "kernels/item_grid.hpp"

namespace headroom {

struct request_meta_params {
  buffer_ref<const int32_t> indptr_src;         // padded + 1 host values
  buffer_ref<const int32_t> last_page_len_src;  // padded host values
  buffer_ref<int32_t> indptr;                   // paged_kv_indptr (the plan's capacity)
  buffer_ref<int32_t> last_page_len;            // paged_kv_last_page_len (the plan's capacity)
  int64_t padded = 0;
};

struct request_meta_fill : item_grid {
  using params = request_meta_params;
  static launch_dim grid(const params& p) { return grid_for(p.padded + 1); }
  static launch_dim block(const params&) { return block_for(); }

  template <class Ctx>
  HEADROOM_HOST_DEVICE void operator()(Ctx& ctx, const params& p, shared_storage&) const {
    const auto src_i = ctx.global(p.indptr_src);
    const auto src_l = ctx.global(p.last_page_len_src);
    const auto dst_i = ctx.global(p.indptr);
    const auto dst_l = ctx.global(p.last_page_len);
    for_items(ctx, p.padded + 1, [&](int64_t i) {
      dst_i.store(i, src_i.load(i));
      if (i < p.padded) dst_l.store(i, src_l.load(i));
    });
  }
};

}  // namespace headroom
