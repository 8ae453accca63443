// fa3_upstream_schedule.hpp: Dao-AILab's FA3 host rules for a scheduler-metadata call.
#include "targets/engine/fa3/fa3_upstream_schedule.hpp"

#include <tuple>

#include "targets/engine/fa3/fa3_rules.hpp"  // FA3's flash.h and heuristics.h, in order
#include "tile_size.h"

namespace headroom::engine::fa3_upstream {
namespace {

using namespace fa3_rules;

std::tuple<int, int, bool, bool> tile_of(const Flash_fwd_params& p, bool paged_kv_non_tma) {
  return tile_size_fwd_sm90(p.d_rounded, p.dv_rounded, p.is_causal, p.is_local, p.is_e4m3 ? 1 : 2, false,
                            paged_kv_non_tma, p.softcap > 0.f);
}

// Paged KV through TMA: as the fork's, local calls included.
bool paged_kv_tma(const Flash_fwd_params& p) {
  if (p.arch < 90 || !p.page_table || p.leftpad_k || p.knew_ptr) return false;
  const auto [block_m, block_n, mma1, rs] = tile_of(p, false);
  return p.page_size % block_n == 0 && p.seqlen_q * (p.h / p.h_k) > block_m;
}

bool packs_gqa(const Flash_fwd_params& p) {
  if (p.arch < 90 || (p.page_table && !p.pagedkv_tma) || p.num_splits > 1) return true;
  if (p.h == p.h_k) return false;
  const auto [block_m, block_n, mma1, rs] = tile_of(p, p.page_table && !p.pagedkv_tma);
  return should_pack_gqa(p.cu_seqlens_q || p.seqused_q, p.seqlen_q, p.h / p.h_k, block_m);
}

}  // namespace

schedule schedule_of(const fa3::schedule_call& c, int arch, int num_sm) {
  Flash_fwd_params p{};
  set_call(p, c, arch, num_sm, window_edges::always, nullptr, nullptr);
  p.pagedkv_tma = paged_kv_tma(p);
  schedule s;
  std::tie(s.block_m, s.block_n, std::ignore, std::ignore) = tile_of(p, p.page_table && !p.pagedkv_tma);
  p.num_splits = c.num_splits <= 0 ? heuristic_splits(p, s.block_m, s.block_n) : c.num_splits;
  p.pack_gqa = packs_gqa(p);
  s.causal = p.is_causal, s.local = p.is_local, s.pack_gqa = p.pack_gqa, s.num_splits = p.num_splits;
  s.sort = !p.is_local;
  s.head_swizzle = p.is_causal || p.is_local;
  s.rounded = (p.b + 3) / 4 * 4;
  s.nvec = 2 + int(s.sort) + int(s.head_swizzle);
  s.entries = int(p.arch >= 90 || p.num_splits > 1) + s.nvec * s.rounded;
  return s;
}

}  // namespace headroom::engine::fa3_upstream
