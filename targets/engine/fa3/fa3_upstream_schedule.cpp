// fa3_upstream_schedule.hpp: Dao-AILab's FA3 host rules for a scheduler-metadata call.
#include "targets/engine/fa3/fa3_upstream_schedule.hpp"

#include <cuda_runtime_api.h>  // flash.h names cudaStream_t without including it

#include <algorithm>
#include <cmath>  // heuristics.h calls ceil without including it
#include <cstdint>
#include <tuple>

#include "flash.h"
#include "heuristics.h"
#include "tile_size.h"

namespace headroom::engine::fa3_upstream {
namespace {

constexpr int varlen_max_batches_1cta = 992;  // PREPARE_VARLEN_MAX_BATCHES_1CTA

int rounded_head(int d) { return d <= 64 ? 64 : d <= 96 ? 96 : d <= 128 ? 128 : d <= 192 ? 192 : 256; }

std::tuple<int, int, bool, bool> tile_of(const Flash_fwd_params& p, bool paged_kv_non_tma) {
  return tile_size_fwd_sm90(p.d_rounded, p.dv_rounded, p.is_causal, p.is_local, p.is_e4m3 ? 1 : 2, false,
                            paged_kv_non_tma, p.softcap > 0.f);
}

bool paged_kv_tma(const Flash_fwd_params& p) {
  if (p.arch < 90 || !p.page_table || p.leftpad_k || p.knew_ptr) return false;
  const auto [block_m, block_n, mma1, rs] = tile_of(p, false);
  return p.page_size % block_n == 0 && p.seqlen_q * (p.h / p.h_k) > block_m;
}

int heuristic_splits(const Flash_fwd_params& p) {
  const auto [block_m, block_n, mma1, rs] = tile_of(p, p.page_table && !p.pagedkv_tma);
  const int loaded_k =
      !p.is_local ? p.seqlen_k
                  : std::max(0, std::min(p.seqlen_k, p.window_size_right + p.window_size_left + 1 + block_m));
  const int n_blocks = (loaded_k + block_n - 1) / block_n;
  const int m_blocks = (p.seqlen_q * (p.h / p.h_k) + block_m - 1) / block_m;
  // As in fa3_schedule.cpp: FA3's int, its wrap reproduced by a modular conversion.
  const int64_t kv_head_bytes = int64_t{p.seqlen_k} * (p.d + p.dv) * (p.is_e4m3 ? 1 : 2);
  const int one_kv_head = static_cast<int32_t>(static_cast<uint32_t>(kv_head_bytes));
  const int total_m_blocks = (p.num_splits_dynamic_ptr ? 1 : p.b) * p.h_k * m_blocks;
  return num_splits_heuristic(total_m_blocks, p.num_sm, n_blocks, m_blocks, one_kv_head,
                              p.is_causal || p.is_local, 128);
}

bool packs_gqa(const Flash_fwd_params& p) {
  if (p.arch < 90 || (p.page_table && !p.pagedkv_tma) || p.num_splits > 1) return true;
  if (p.h == p.h_k) return false;
  const auto [block_m, block_n, mma1, rs] = tile_of(p, p.page_table && !p.pagedkv_tma);
  return should_pack_gqa(p.cu_seqlens_q || p.seqused_q, p.seqlen_q, p.h / p.h_k, block_m);
}

template <class T>
T* present() {
  return reinterpret_cast<T*>(1);
}

}  // namespace

schedule schedule_of(const fa3::schedule_call& c, int arch, int num_sm) {
  Flash_fwd_params p{};
  p.is_e4m3 = c.e4m3;
  p.is_bf16 = !c.e4m3;
  p.b = c.batch;
  p.seqlen_q = c.max_seqlen_q, p.seqlen_k = c.max_seqlen_k;
  p.h = c.num_heads, p.h_k = c.num_heads_k;
  p.d = p.dv = c.headdim;
  p.d_rounded = p.dv_rounded = rounded_head(c.headdim);
  p.cu_seqlens_q = present<int>();
  p.seqused_k = present<int>();
  int left = c.window_left, right = c.window_right;
  bool causal = c.causal;
  if (left >= p.seqlen_k - 1) left = -1;
  if (right >= p.seqlen_q - 1) right = -1;
  if (p.seqlen_q == 1 && left == -1 && right == -1 && (p.d <= 64 || p.d > 128)) causal = false;
  if (causal) right = 0;
  p.is_causal = left < 0 && right == 0;
  p.is_local = (left >= 0 || right >= 0) && !p.is_causal;
  if (left < 0) left = p.seqlen_k - 1;  // Dao-AILab's: whatever the right edge
  if (right < 0) right = p.seqlen_q - 1;
  p.window_size_left = left, p.window_size_right = right;
  p.arch = arch, p.num_sm = num_sm;
  p.page_size = c.page_size;
  p.page_table = present<int>();
  p.prepare_varlen_pdl = p.b <= varlen_max_batches_1cta;
  p.num_splits_dynamic_ptr = present<int>();
  p.pagedkv_tma = paged_kv_tma(p);
  p.num_splits = c.num_splits <= 0 ? heuristic_splits(p) : c.num_splits;
  p.pack_gqa = packs_gqa(p);
  schedule s;
  s.causal = p.is_causal, s.local = p.is_local, s.pack_gqa = p.pack_gqa, s.num_splits = p.num_splits;
  s.sort = !p.is_local;
  s.head_swizzle = p.is_causal || p.is_local;
  s.rounded = (p.b + 3) / 4 * 4;
  s.nvec = 2 + int(s.sort) + int(s.head_swizzle);
  s.entries = int(p.arch >= 90 || p.num_splits > 1) + s.nvec * s.rounded;
  std::tie(s.block_m, s.block_n, std::ignore, std::ignore) = tile_of(p, p.page_table && !p.pagedkv_tma);
  return s;
}

}  // namespace headroom::engine::fa3_upstream
