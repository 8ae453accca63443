// fa3_schedule.hpp: FA3's host rules for a scheduler-metadata call.
#include "targets/engine/fa3/fa3_schedule.hpp"

#include <tuple>

#include "targets/engine/fa3/fa3_rules.hpp"  // FA3's flash.h and heuristics.h, in order
#include "tile_size.h"

namespace headroom::engine::fa3 {
namespace {

using namespace fa3_rules;

std::tuple<int, int, bool, bool> tile_of(const Flash_fwd_params& p, bool paged_kv_non_tma) {
  return tile_size_fwd_sm90(p.d_rounded, p.dv_rounded, p.is_causal, p.is_local, p.is_e4m3 ? 1 : 2, false,
                            paged_kv_non_tma, p.softcap > 0.f, use_one_mma_wg(p));
}

// Paged KV through TMA: a paged, non-local call whose page holds whole key blocks and whose packed
// query outgrows one m-block.
bool paged_kv_tma(const Flash_fwd_params& p) {
  if (p.arch < 90 || !p.page_table || p.leftpad_k || p.knew_ptr || p.is_local) return false;
  const auto [block_m, block_n, mma1, rs] = tile_of(p, false);
  return p.page_size % block_n == 0 && p.seqlen_q * (p.h / p.h_k) > block_m;
}

bool packs_gqa(const Flash_fwd_params& p) {
  if (p.arch < 90 || (p.page_table && !p.pagedkv_tma) || p.num_splits > 1) return true;
  if (p.h / p.h_k == 8 && p.is_local && p.d == 64 && p.dv == p.d) return true;
  const auto [block_m, block_n, mma1, rs] = tile_of(p, p.page_table && !p.pagedkv_tma);
  return should_pack_gqa(p.cu_seqlens_q || p.seqused_q, p.seqlen_q, p.h / p.h_k, block_m);
}

}  // namespace

schedule schedule_of(const schedule_call& c, int arch, int num_sm, int* cu_seqlens_q, int* seqused_k) {
  schedule s;
  Flash_fwd_params& p = s.params;
  set_call(p, c, arch, num_sm, window_edges::when_other_set, cu_seqlens_q, seqused_k);
  p.pagedkv_tma = paged_kv_tma(p);
  std::tie(s.block_m, s.block_n, std::ignore, std::ignore) = tile_of(p, p.page_table && !p.pagedkv_tma);
  p.num_splits = c.num_splits <= 0 ? heuristic_splits(p, s.block_m, s.block_n) : c.num_splits;
  p.pack_gqa = packs_gqa(p) || p.num_splits > 1;
#ifdef FLASHATTENTION_PACKGQA_ONLY
  p.pack_gqa = p.pack_gqa || p.d == p.dv;  // vLLM's build: every call of head size v = head size packs
#endif
  // The metadata tensor: vectors of r = round_up(b, 4) entries (16-byte aligned), in the order
  // prepare_seqlen_q, dynamic splits (one CTA and more than one split), heads in L2 (head swizzle:
  // causal or local), then the tile semaphore (always on SM90).
  s.dynamic_split = p.b <= varlen_max_batches_1cta && p.num_splits > 1;
  s.needs_semaphore = p.arch >= 90 || p.num_splits > 1;
  p.varlen_sort_batches = false;
  p.head_swizzle = p.is_causal || p.is_local;
  s.rounded = (p.b + 3) / 4 * 4;
  s.nvec = 1 + int(s.dynamic_split) + int(p.head_swizzle);
  s.entries = int(s.needs_semaphore) + s.nvec * s.rounded;
  p.num_splits_dynamic_ptr = nullptr;  // until point_into
  return s;
}

void point_into(schedule& s, int* metadata) {
  Flash_fwd_params& p = s.params;
  p.prepare_seqlen_q_ptr = metadata;
  p.num_splits_dynamic_ptr = s.dynamic_split ? metadata + s.rounded : nullptr;
  p.varlen_batch_idx_ptr = nullptr;
  p.num_nheads_in_l2_ptr = p.head_swizzle ? metadata + (s.nvec - 1) * s.rounded : nullptr;
  p.tile_count_semaphore = s.needs_semaphore ? metadata + s.nvec * s.rounded : nullptr;
}

}  // namespace headroom::engine::fa3
