// fa3_schedule.hpp: FA3's host rules for a scheduler-metadata call.
#include "targets/engine/fa3/fa3_schedule.hpp"

#include <algorithm>
#include <cmath>  // heuristics.h calls ceil without including it
#include <cstdint>
#include <stdexcept>
#include <tuple>

#include "heuristics.h"
#include "tile_size.h"

namespace headroom::engine::fa3 {
namespace {

constexpr int varlen_max_batches_1cta = 992;  // PREPARE_VARLEN_MAX_BATCHES_1CTA

// FA3's head-size rounding (every head size compiled: 64, 96, 128, 192, 256).
int rounded_head(int d) { return d <= 64 ? 64 : d <= 96 ? 96 : d <= 128 ? 128 : d <= 192 ? 192 : 256; }

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

// The split count FA3 picks when told 0: the varlen case counts as one request (an upper bound the
// dynamic split refines per request), the query packed over the group.
int heuristic_splits(const Flash_fwd_params& p) {
  const auto [block_m, block_n, mma1, rs] = tile_of(p, p.page_table && !p.pagedkv_tma);
  const int loaded_k =
      !p.is_local ? p.seqlen_k
                  : std::max(0, std::min(p.seqlen_k, p.window_size_right + p.window_size_left + 1 + block_m));
  const int n_blocks = (loaded_k + block_n - 1) / block_n;
  const int m_blocks = (p.seqlen_q * (p.h / p.h_k) + block_m - 1) / block_m;
  // FA3 computes a kv head's bytes in int. Its wrap past 2^31 is reproduced by a modular conversion
  // (defined, unlike the overflow), so a split count it changes shows as a difference.
  const int64_t kv_head_bytes = int64_t{p.seqlen_k} * (p.d + p.dv) * (p.is_e4m3 ? 1 : 2);
  const int one_kv_head = static_cast<int32_t>(static_cast<uint32_t>(kv_head_bytes));
  const int total_m_blocks = (p.num_splits_dynamic_ptr ? 1 : p.b) * p.h_k * m_blocks;
  return num_splits_heuristic(total_m_blocks, p.num_sm, n_blocks, m_blocks, one_kv_head,
                              p.is_causal || p.is_local, 128);
}

bool packs_gqa(const Flash_fwd_params& p) {
  if (p.arch < 90 || (p.page_table && !p.pagedkv_tma) || p.num_splits > 1) return true;
  if (p.h / p.h_k == 8 && p.is_local && p.d == 64 && p.dv == p.d) return true;
  const auto [block_m, block_n, mma1, rs] = tile_of(p, p.page_table && !p.pagedkv_tma);
  return should_pack_gqa(p.cu_seqlens_q || p.seqused_q, p.seqlen_q, p.h / p.h_k, block_m);
}

// A marker pointer: FA3 sets some pointers to 1 only so that the rules see them present.
template <class T>
T* present() {
  return reinterpret_cast<T*>(1);
}

}  // namespace

schedule schedule_of(const schedule_call& c, int arch, int num_sm, int* cu_seqlens_q, int* seqused_k) {
  schedule s;
  Flash_fwd_params& p = s.params;
  p.is_e4m3 = c.e4m3;
  p.is_bf16 = !c.e4m3;
  p.b = c.batch;
  p.seqlen_q = c.max_seqlen_q, p.seqlen_k = c.max_seqlen_k;
  p.h = c.num_heads, p.h_k = c.num_heads_k;
  p.d = p.dv = c.headdim;
  p.d_rounded = p.dv_rounded = rounded_head(c.headdim);
  p.cu_seqlens_q = cu_seqlens_q ? cu_seqlens_q : present<int>();
  p.seqused_k = seqused_k ? seqused_k : present<int>();
  int left = c.window_left, right = c.window_right;
  bool causal = c.causal;
  if (left >= p.seqlen_k - 1) left = -1;
  if (right >= p.seqlen_q - 1) right = -1;
  // One query row without a window: causal changes nothing, and FA3 keeps it only where it picks
  // the tile (head size in (64, 128] with a paged cache, which vLLM's always is).
  if (p.seqlen_q == 1 && left == -1 && right == -1 && (p.d <= 64 || p.d > 128)) causal = false;
  if (causal) right = 0;
  p.is_causal = left < 0 && right == 0;
  p.is_local = (left >= 0 || right >= 0) && !p.is_causal;
  if (left < 0 && right >= 0) left = p.seqlen_k - 1;
  if (left >= 0 && right < 0) right = p.seqlen_q - 1;
  p.window_size_left = left, p.window_size_right = right;
  p.arch = arch, p.num_sm = num_sm;
  p.page_size = c.page_size;
  p.page_table = present<int>();  // paged (never read by the scheduler)
  p.prepare_varlen_pdl = p.b <= varlen_max_batches_1cta;
  p.num_splits_dynamic_ptr = present<int>();  // the heuristic's varlen case
  p.pagedkv_tma = paged_kv_tma(p);
  p.num_splits = c.num_splits <= 0 ? heuristic_splits(p) : c.num_splits;
  p.pack_gqa = packs_gqa(p) || p.num_splits > 1;
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
  std::tie(s.block_m, s.block_n, std::ignore, std::ignore) = tile_of(p, p.page_table && !p.pagedkv_tma);
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
