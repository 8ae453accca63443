// FA3's host rules for a scheduler-metadata call in Dao-AILab's tree (hopper/flash_api.cpp,
// mha_fwd_get_scheduler_metadata, read at 0251105), which SGLang's sgl-attn follows: the same
// normalisation as vLLM's fork but for its window edges, no one-MMA-warpgroup tile, paged-KV TMA for
// local calls too, and the layout of two vectors always (dynamic splits, m-blocks), a sort vector
// unless local, heads in L2 when causal or local, the semaphore last. The tile, the packing test and
// the split heuristic are Dao-AILab's header code (tile_size.h, heuristics.h). The result carries no
// FA3 type: the two trees define the same names differently, so this unit and fa3_schedule.cpp never
// share a program.
#pragma once

#include "targets/engine/fa3/schedule_call.hpp"

namespace headroom::engine::fa3_upstream {

struct schedule {
  bool causal = false, local = false, sort = false, head_swizzle = false, pack_gqa = false;
  int num_splits = 0, block_m = 0, block_n = 0;
  int rounded = 0, nvec = 0, entries = 0;
};

// On a device of `arch` with `num_sm` SMs, for a varlen call (cu_seqlens_q and seqused_k given).
// Call only when fa3::refusal(c) is empty.
schedule schedule_of(const fa3::schedule_call& c, int arch, int num_sm);

}  // namespace headroom::engine::fa3_upstream
