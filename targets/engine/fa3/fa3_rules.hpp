// The host rules the two FA3 trees share (vLLM's fork, fa3_schedule.cpp; Dao-AILab's,
// fa3_upstream_schedule.cpp): the call's params, the mask's normalisation up to the window edges,
// and the split heuristic's inputs for a given tile. It includes "flash.h" and "heuristics.h" from
// the including target's include path, so each unit gets its own tree's types and heuristic; the
// two units never share a program.
#pragma once

#include <cuda_runtime_api.h>  // flash.h names cudaStream_t without including it

#include <algorithm>
#include <cmath>  // heuristics.h calls ceil without including it
#include <cstdint>

#include "flash.h"
#include "heuristics.h"
#include "targets/engine/fa3/schedule_call.hpp"

namespace headroom::engine::fa3_rules {

inline constexpr int varlen_max_batches_1cta = 992;  // PREPARE_VARLEN_MAX_BATCHES_1CTA

// FA3's head-size rounding (every head size compiled: 64, 96, 128, 192, 256).
inline int rounded_head(int d) { return d <= 64 ? 64 : d <= 96 ? 96 : d <= 128 ? 128 : d <= 192 ? 192 : 256; }
// Its rounding of a head size v apart from the head size (flash_api.cpp, round_up_headdimv).
inline int rounded_head_v(int dv) { return dv <= 256 ? rounded_head(dv) : 512; }

// A marker pointer: FA3 sets some pointers to 1 only so that the rules see them present.
template <class T>
T* present() {
  return reinterpret_cast<T*>(1);
}

// Where a one-sided window's open edge goes: the fork widens it only when the other edge is set,
// Dao-AILab's always.
enum class window_edges { when_other_set, always };

// The call's params as mha_fwd_get_scheduler_metadata sets them before paged-KV TMA, the split count
// and GQA packing: shapes, the normalised mask, the device, and the paged, varlen and dynamic-split
// markers (the heuristic's varlen case).
inline void set_call(Flash_fwd_params& p, const fa3::schedule_call& c, int arch, int num_sm,
                     window_edges edges, int* cu_seqlens_q, int* seqused_k) {
  p.is_e4m3 = c.e4m3;
  p.is_bf16 = !c.e4m3;
  p.b = c.batch;
  p.seqlen_q = c.max_seqlen_q, p.seqlen_k = c.max_seqlen_k;
  p.h = c.num_heads, p.h_k = c.num_heads_k;
  p.d = c.headdim;
  p.dv = c.headdim_v > 0 ? c.headdim_v : c.headdim;
  p.d_rounded = rounded_head(p.d);
  p.dv_rounded = p.dv == p.d ? p.d_rounded : rounded_head_v(p.dv);
  p.cu_seqlens_q = cu_seqlens_q ? cu_seqlens_q : present<int>();
  p.seqused_k = seqused_k ? seqused_k : present<int>();
  int left = c.window_left, right = c.window_right;
  bool causal = c.causal;
  if (left >= p.seqlen_k - 1) left = -1;
  if (right >= p.seqlen_q - 1) right = -1;
  // One query row without a window: causal changes nothing, and FA3 keeps it only where it picks
  // the tile (head size in (64, 128] with a paged cache, which the engines' always is).
  if (p.seqlen_q == 1 && left == -1 && right == -1 && (p.d <= 64 || p.d > 128)) causal = false;
  if (causal) right = 0;
  p.is_causal = left < 0 && right == 0;
  p.is_local = (left >= 0 || right >= 0) && !p.is_causal;
  const bool always = edges == window_edges::always;
  if (left < 0 && (always || right >= 0)) left = p.seqlen_k - 1;
  if (right < 0 && (always || left >= 0)) right = p.seqlen_q - 1;
  p.window_size_left = left, p.window_size_right = right;
  p.arch = arch, p.num_sm = num_sm;
  p.page_size = c.page_size;
  p.page_table = present<int>();  // paged (never read by the scheduler)
  p.prepare_varlen_pdl = p.b <= varlen_max_batches_1cta;
  p.num_splits_dynamic_ptr = present<int>();
}

// The split count FA3 picks when told 0, on the tile `block_m` x `block_n` its tree gives the call:
// the varlen case counts as one request (an upper bound the dynamic split refines per request), the
// query packed over the group.
inline int heuristic_splits(const Flash_fwd_params& p, int block_m, int block_n) {
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

}  // namespace headroom::engine::fa3_rules
