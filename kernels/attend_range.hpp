// attend_range(): the heart of every attention body. A pass of up to attn_rows query rows that share
// one kv head runs the online softmax over keys [lo, hi) of one sequence, each warp of the block
// taking its own tiles of keys, and leaves every warp's (m, l, accumulators) in attn_shared for
// attn_combined() (attend_shared.hpp). Two implementations with the same contract and the same
// global accesses per key: on tensor cores for bf16 / fp16 at padded head sizes up to 256
// (attend_mma.hpp), on CUDA cores otherwise (attend_simt.hpp).
#pragma once

#include "kernels/attend_mma.hpp"
#include "kernels/attend_simt.hpp"

namespace headroom {

// The registers attend_range() keeps per thread: allocate once per block, before the passes.
template <class T, int Dp, class Ctx>
HEADROOM_HOST_DEVICE auto make_attn_registers(Ctx& ctx) {
  if constexpr (attn_on_tensor_cores<T, Dp>)
    return mma_registers<Ctx, Dp>{make_registers<mma_lane<Dp>>(ctx), make_registers<fvec<2>>(ctx)};
  else
    return make_simt_registers<Dp>(ctx);
}

// The pass; ends on a barrier and returns the mask of valid rows.
template <class T, int Dp, class Ctx, class Sh, class RowOf, class Regs>
HEADROOM_HOST_DEVICE uint32_t attend_range(Ctx& ctx, const paged_attention_inputs<T>& p, Sh& s,
                                           const RowOf& row_of, int64_t seq, int64_t kvh, int64_t lo,
                                           int64_t hi, Regs& rg) {
  if constexpr (attn_on_tensor_cores<T, Dp>)
    return attend_range_mma<T, Dp>(ctx, p, s, row_of, seq, kvh, lo, hi, rg);
  else
    return attend_range_simt<T, Dp>(ctx, p, s, row_of, seq, kvh, lo, hi, rg);
}

}  // namespace headroom
