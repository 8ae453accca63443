// FA3's host rules for one scheduler-metadata call, as mha_fwd_get_scheduler_metadata applies them
// in vllm-project/flash-attention hopper/flash_api.cpp (torch code, so restated here): the mask's
// normalisation, paged-KV TMA, the split count when given 0, GQA packing and the metadata tensor's
// layout. The tile, the one-warpgroup choice, the packing test and the split heuristic are FA3's own
// header code (tile_size.h, heuristics.h), compiled from the checkout. Used by headroom_fa3_driver
// (which then launches FA3's kernel) and by the CPU comparison with headroom's mirror
// (tests/engine_target/fa3_schedule_test.cpp). Needs FA3's hopper/ headers on the include path.
#pragma once

#include <cuda_runtime_api.h>  // flash.h names cudaStream_t without including it

#include "flash.h"
#include "targets/engine/fa3/schedule_call.hpp"

namespace headroom::engine::fa3 {

struct schedule {
  Flash_fwd_params params{};  // as FA3 sets them; the metadata pointers are unset (point_into)
  bool dynamic_split = false, needs_semaphore = false;
  int rounded = 0, nvec = 0, entries = 0;  // the layout: nvec vectors of `rounded`, then the semaphore
  int block_m = 0, block_n = 0;            // the tile the kernel is told
};

// The schedule on a device of `arch` (90: SM90) with `num_sm` SMs. `cu_seqlens_q` and `seqused_k`
// may be null on the host: only their presence matters to the rules. Call only when refusal(c) is
// empty.
schedule schedule_of(const schedule_call& c, int arch, int num_sm, int* cu_seqlens_q, int* seqused_k);

// Points the schedule's metadata vectors and semaphore into `metadata` (the persistent buffer).
void point_into(schedule& s, int* metadata);

}  // namespace headroom::engine::fa3
