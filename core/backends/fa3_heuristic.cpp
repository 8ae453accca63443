// FA3's split heuristic and mask normalisation (fa3.hpp), after vllm-project/flash-attention's
// hopper/flash_api.cpp (mha_fwd_get_scheduler_metadata, get_pagedkv_tma, get_num_splits),
// hopper/heuristics.h (use_one_mma_wg, num_splits_heuristic) and hopper/tile_size.h
// (tile_size_fwd_sm90), for SM90, 16-bit or e4m3 elements, paged KV, no softcap; for
// fa3_build::upstream the tiles of Dao-AILab's hopper/tile_size.h at 0251105 (get_num_splits and
// num_splits_heuristic read the same there).
#include <algorithm>
#include <cmath>

#include "core/backends/fa3.hpp"
#include "core/util/checked.hpp"

namespace headroom {
namespace {

// round_up_headdim: the head sizes FA3 compiles (above 256 it has no kernel; 256 stands in).
int64_t rounded_head_size(int64_t d) {
  for (int64_t r : {64, 96, 128, 192})
    if (d <= r) return r;
  return 256;
}

// round_up_headdimv: mha_fwd's dv_rounded for a head size v apart from the head size (0 when they
// are equal: dv_rounded is then d_rounded, which the tiles read as the same-size rows).
int64_t rounded_head_size_v(const fa3_call& c) {
  const int64_t dv = fa3_head_size_v(c);
  if (dv == c.head_size) return 0;
  return dv <= 256 ? rounded_head_size(dv) : 512;
}

constexpr int64_t l2_bytes = int64_t{50} * 1024 * 1024;  // num_splits_heuristic's assumed L2

// num_splits_heuristic, with its float arithmetic.
int64_t splits_heuristic(int64_t total_mblocks, int64_t sms, int64_t n_blocks, int64_t m_blocks,
                         int64_t kv_head_bytes, bool causal_or_local, int64_t max_splits) {
  if (static_cast<float>(total_mblocks) >= 0.8f * static_cast<float>(sms)) {
    if (kv_head_bytes > l2_bytes && m_blocks >= sms * 2 && !causal_or_local)
      return std::min(ceil_div(kv_head_bytes, l2_bytes), max_splits);
    return 1;
  }
  if (n_blocks <= 4) return 1;
  max_splits = std::min({max_splits, sms, n_blocks});
  float best = 0.f;
  auto efficiency = [&](int64_t n) {
    const float waves = static_cast<float>(total_mblocks * n) / static_cast<float>(sms);
    return waves / std::ceil(waves);
  };
  for (int64_t n = 1; n <= max_splits; ++n) best = std::max(best, efficiency(n));
  for (int64_t n = 1; n <= max_splits; ++n)
    if (static_cast<double>(efficiency(n)) >= 0.85 * static_cast<double>(best)) return n;
  return 1;
}

}  // namespace

fa3_window_size fa3_window_size_of(int64_t window) {
  if (window <= 0) return {};
  return {window - 1, 0};
}

fa3_mask fa3_mask_of(const fa3_call& c) {
  const fa3_window_size w = fa3_window_size_of(c.window);
  int64_t left = w.left, right = w.right;
  if (left >= c.max_seq_len - 1) left = -1;
  if (right >= c.max_query_len - 1) right = -1;
  bool causal = true;  // vLLM always asks for causal attention
  if (c.max_query_len == 1 && left == -1 && right == -1 && (c.head_size <= 64 || c.head_size > 128))
    causal = false;
  if (causal) right = 0;
  fa3_mask m;
  m.causal = left < 0 && right == 0;
  m.local = (left >= 0 || right >= 0) && !m.causal;
  if (left < 0 && right >= 0) left = c.max_seq_len - 1;
  if (left >= 0 && right < 0) right = c.max_query_len - 1;
  m.window_left = left, m.window_right = right;
  return m;
}

namespace {

// tile_size_fwd_sm90's FP8 branch (element_size 1) in the vLLM fork, two-level accumulation on:
// the one-MMA-warpgroup (decode) tiles, else the prefill tiles; causal and paged-KV TMA do not
// change them.
fa3_tile fork_e4m3_tile(int64_t d, bool local, bool one_mma_wg) {
  if (one_mma_wg) return d <= 96 ? fa3_tile{64, 128} : fa3_tile{64, 96};
  if (d <= 64) return {192, 128};
  if (d <= 96) return {128, 128};
  if (d <= 128) return {128, 192};
  if (d <= 192) return {128, 96};
  return {128, local ? 64 : 128};
}

// The FP8 branch of Dao-AILab's tile_size_fwd_sm90 at 0251105 (no V column-major, no softcap).
fa3_tile upstream_e4m3_tile(int64_t d, bool local, bool paged_kv_non_tma) {
  if (d <= 64) return {192, 160};
  if (d <= 96) return {192, 128};
  if (d <= 128) return {128, paged_kv_non_tma ? 160 : 224};
  if (d <= 192) return {128, paged_kv_non_tma && local ? 128 : 160};
  return {128, local ? 64 : 128};
}

}  // namespace

fa3_tile fa3_tile_size(int64_t d, bool causal, bool local, bool paged_kv_non_tma, bool one_mma_wg, bool e4m3,
                       int64_t dv) {
  if (e4m3) return fork_e4m3_tile(d, local, one_mma_wg);
  if (dv <= 0) dv = d;
  if (d <= 64) {
    if (dv == 512) return {64, 64};
    if (dv == 256) return {128, 96};
    if (one_mma_wg) return {64, 192};
    return {192, causal ? 128 : (local || paged_kv_non_tma) ? 160 : 192};
  }
  if (d <= 96) return {192, (local || paged_kv_non_tma) ? 128 : 144};
  if (d <= 128) {
    const bool narrow = causal || local || paged_kv_non_tma;
    return one_mma_wg ? fa3_tile{64, narrow ? 128 : 176} : fa3_tile{128, narrow ? 128 : 160};
  }
  if (d <= 192) return {128, (paged_kv_non_tma || local || dv > 128) ? 96 : 128};
  return {128, local ? 64 : 80};
}

fa3_tile fa3_upstream_tile_size(int64_t d, bool causal, bool local, bool paged_kv_non_tma, bool e4m3,
                                int64_t dv) {
  if (e4m3) return upstream_e4m3_tile(d, local, paged_kv_non_tma);
  if (dv <= 0) dv = d;
  if (d <= 64) {
    if (dv == 512) return {64, 64};
    if (dv == 256) return {128, 96};
    return {192, (causal || local || paged_kv_non_tma) ? 128 : 192};
  }
  if (d <= 96) return {192, (local || paged_kv_non_tma) ? 128 : 144};
  if (d <= 128) return {128, (causal || local || paged_kv_non_tma) ? 128 : 176};
  if (d <= 192) return {128, (local || paged_kv_non_tma) ? 96 : (dv <= 128 ? 128 : 112)};
  return {128, local ? 64 : 80};
}

int64_t fa3_head_size_v(const fa3_call& c) { return c.head_size_v > 0 ? c.head_size_v : c.head_size; }

int64_t fa3_group_size(const fa3_call& c) {
  return std::max<int64_t>(1, c.q_heads / std::max<int64_t>(c.kv_heads, 1));
}

namespace {

int64_t packed_query(const fa3_call& c) {
  return checked_mul(std::max<int64_t>(c.max_query_len, 1), fa3_group_size(c), "fa3 packed query");
}

// The tile for a call whose mask and packed query length are already known. Paged KV goes through
// TMA when the block size is a multiple of kBlockN and the packed query outgrows kBlockM
// (get_pagedkv_tma); the vLLM fork also keeps local attention off TMA.
bool one_mma_wg(const fa3_call& c, const fa3_mask& mk, int64_t q_packed) {
  return (c.head_size == 128 || c.head_size == 64) && !mk.local && q_packed <= 64;
}

bool paged_tma(const fa3_call& c, const fa3_mask& mk, int64_t q_packed) {
  const int64_t d = rounded_head_size(c.head_size), dv = rounded_head_size_v(c);
  if (c.build == fa3_build::upstream) {
    const fa3_tile tma = fa3_upstream_tile_size(d, mk.causal, mk.local, false, c.e4m3, dv);
    return c.page_size % tma.n == 0 && q_packed > tma.m;
  }
  const fa3_tile tma = fa3_tile_size(d, mk.causal, mk.local, false, one_mma_wg(c, mk, q_packed), c.e4m3, dv);
  return !mk.local && c.page_size % tma.n == 0 && q_packed > tma.m;
}

fa3_tile call_tile(const fa3_call& c, const fa3_mask& mk, int64_t q_packed) {
  const int64_t d = rounded_head_size(c.head_size), dv = rounded_head_size_v(c);
  const bool non_tma = !paged_tma(c, mk, q_packed);
  if (c.build == fa3_build::upstream)
    return fa3_upstream_tile_size(d, mk.causal, mk.local, non_tma, c.e4m3, dv);
  return fa3_tile_size(d, mk.causal, mk.local, non_tma, one_mma_wg(c, mk, q_packed), c.e4m3, dv);
}

}  // namespace

fa3_tile fa3_call_tile(const fa3_call& c) { return call_tile(c, fa3_mask_of(c), packed_query(c)); }

bool fa3_paged_kv_tma(const fa3_call& c) { return paged_tma(c, fa3_mask_of(c), packed_query(c)); }

int64_t fa3_heuristic_splits(const fa3_call& c) {
  const fa3_mask mk = fa3_mask_of(c);
  const int64_t q_packed = packed_query(c);
  const fa3_tile t = call_tile(c, mk, q_packed);
  const int64_t loaded =
      !mk.local ? c.max_seq_len
                : std::max<int64_t>(0, std::min(c.max_seq_len, mk.window_right + mk.window_left + 1 + t.m));
  const int64_t n_blocks = ceil_div(loaded, t.n), m_blocks = ceil_div(q_packed, t.m);
  const int64_t total = checked_mul(c.kv_heads, m_blocks, "fa3 m-blocks");  // the batch counts as 1
  // size_one_kv_head: seqlen_k x (d + dv) x (is_e4m3 ? 1 : 2).
  const int64_t kv_head_bytes = checked_product("fa3 kv head bytes", c.max_seq_len,
                                                checked_add(c.head_size, fa3_head_size_v(c)), c.e4m3 ? 1 : 2);
  return splits_heuristic(total, fa3_num_sms, n_blocks, m_blocks, kv_head_bytes, mk.causal || mk.local,
                          fa3_max_splits);
}

bool fa3_head_swizzle(int64_t max_query_len, int64_t max_seq_len, int64_t head_size, int64_t window) {
  fa3_call c;
  c.max_query_len = max_query_len, c.max_seq_len = max_seq_len, c.head_size = head_size, c.window = window;
  const fa3_mask m = fa3_mask_of(c);
  return m.causal || m.local;
}

std::vector<int64_t> fa3_dynamic_splits(const fa3_call& c, const std::vector<int32_t>& query_start,
                                        const std::vector<int32_t>& seq_lens, int64_t static_splits) {
  const int64_t b = static_cast<int64_t>(seq_lens.size());
  std::vector<int64_t> splits(static_cast<std::size_t>(b), 1);
  if (b > fa3_varlen_max_batches || static_splits <= 1) return splits;  // more than one CTA, or one split
  const fa3_tile t = fa3_call_tile(c);
  const int64_t group = fa3_group_size(c);  // packed GQA: a split step always packs
  std::vector<int64_t> n_blocks(static_cast<std::size_t>(b));
  int64_t total = 0;
  for (int64_t i = 0; i < b; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const int64_t q = u + 1 < query_start.size() ? query_start[u + 1] - query_start[u] : 0;
    const int64_t m = ceil_div(checked_mul(q, group, "fa3 packed rows"), t.m);
    n_blocks[u] = ceil_div(static_cast<int64_t>(seq_lens[u]), t.n);
    total = checked_add(total, checked_mul(m, n_blocks[u], "fa3 blocks"));
  }
  // prepare_varlen_num_blocks_kernel's float arithmetic, with its 10% margin.
  const auto per_sm = static_cast<int64_t>(std::ceil(
      static_cast<float>(total) * 1.1f * static_cast<float>(c.kv_heads) / static_cast<float>(fa3_num_sms)));
  if (per_sm <= 0) return splits;  // no block at all: every request gets one split
  for (std::size_t u = 0; u < n_blocks.size(); ++u)
    splits[u] = std::max<int64_t>(1, std::min(ceil_div(n_blocks[u], per_sm), static_splits));
  return splits;
}

int64_t fa3_dynamic_splits_max(const fa3_call& c, const std::vector<int32_t>& query_start,
                               const std::vector<int32_t>& seq_lens, int64_t static_splits) {
  int64_t most = 1;
  for (int64_t s : fa3_dynamic_splits(c, query_start, seq_lens, static_splits)) most = std::max(most, s);
  return most;
}

}  // namespace headroom
