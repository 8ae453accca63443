// FlashAttention-3's ahead-of-time scheduler metadata (vLLM FLASH_ATTN on FA 3, docs/catalogue.md
// C3): the persistent int32 buffer vLLM's builder allocates under FULL CUDA graphs, the layout
// vllm-project/flash-attention's mha_fwd_get_scheduler_metadata writes into it for a batch, and the
// size mha_fwd recomputes and checks at run time (CHECK_SHAPE).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/backends/buffers.hpp"
#include "core/engine/steps.hpp"

namespace headroom {

inline constexpr int64_t fa3_varlen_max_batches = 992;  // PREPARE_VARLEN_MAX_BATCHES_1CTA
// vLLM's attention_config.flash_attn_max_num_splits_for_cuda_graph (env
// VLLM_FLASH_ATTN_MAX_NUM_SPLITS_FOR_CUDA_GRAPH), 32 by default (#20301 had 16); pinned in
// Fa3.GraphSplitCountIsVllmsDefault.
inline constexpr int64_t fa3_graph_max_splits = 32;
inline constexpr int64_t fa3_num_sms = 132;     // H100 / H200 SXM: num_sm of the heuristic
inline constexpr int64_t fa3_max_splits = 128;  // get_num_splits' cap on the split count

// The historical wrong formulas (core/check/mutants.hpp).
struct fa3_mutants {
  bool old_layout = false;      // capacity max_num_seqs + 1 (right for the semaphore-first layout)
  bool no_roundup = false;      // capacity 4 * max batch + 1
  bool split_mismatch = false;  // scheduled with the graph's max_num_splits whatever the run uses
};

// One call's layout: [0, r) prepare_varlen, [r, 2r) dynamic splits (when on), then the heads-in-L2
// vector (head swizzle), r = round_up(batch, 4); the tile semaphore LAST, at nvec * r (SM90).
struct fa3_layout {
  int64_t batch = 0, rounded = 0, nvec = 1;
  bool dynamic_split = false, head_swizzle = false;
  int64_t size() const { return 1 + nvec * rounded; }  // scheduler_needs_semaphore on SM90
};
fa3_layout fa3_layout_of(int64_t batch, int64_t num_splits, bool head_swizzle);
// Dao-AILab's layout (hopper/flash_api.cpp at 0251105, mha_fwd and mha_fwd_get_scheduler_metadata):
// the dynamic-split and m-block vectors always, the sort vector unless local, the heads-in-L2
// vector when head_swizzle, the semaphore last (SM90). Its size does not depend on the split count.
fa3_layout fa3_upstream_layout_of(int64_t batch, bool local, bool head_swizzle);

// Which hopper/ tree FA3 is built from. vLLM builds its fork (vllm-project/flash-attention at
// 617264c: one-MMA-warpgroup tiles, a dynamic-split vector only when the split count is above 1,
// no sort vector). SGLang builds sgl-project/sgl-attn (pinned at f89bc23 by its kernels'
// CMakeLists.txt at 34af3ff, not fetched here), which follows Dao-AILab's hopper/ (read at
// 0251105): no one-MMA-warpgroup tiles, and a layout of 2 vectors always, a sort vector unless
// local, the heads-in-L2 vector when causal or local (fa3_upstream_layout_of).
enum class fa3_build { vllm_fork, upstream };

// What vLLM's FlashAttentionMetadataBuilder passes to one get_scheduler_metadata call besides the
// batch: the model's query heads per rank (num_heads_q), the group's kv heads, head size, block size
// (page_size: paged KV, always), sliding window (sent as (window - 1, 0), causal=True; 0: none), and
// the step's max_seqlen_q / max_seqlen_k. No softcap, and no headdim_v: FA3's Python wrapper then
// takes head size v = head size. 16-bit q/k/v, or with an fp8 cache e4m3 (vLLM's
// _get_scheduler_metadata passes qkv_dtype fp8 then, and its attention layer quantises q; SGLang
// passes its cache dtype): params.is_e4m3, element size 1. `build` picks the tree whose tiles the
// split heuristic uses. head_size_v: the v tensor's last dimension in mha_fwd's call (a
// FlashAttentionDiffKV layer's, MiMo-V2's 128 beside a head size of 192), 0: the head size.
struct fa3_call {
  int64_t q_heads = 1, kv_heads = 1, head_size = 128, page_size = 16, window = 0;
  int64_t max_query_len = 1, max_seq_len = 0;
  fa3_build build = fa3_build::vllm_fork;
  bool e4m3 = false;
  int64_t head_size_v = 0;
};
// The call's head size v (head_size when head_size_v is 0).
int64_t fa3_head_size_v(const fa3_call& c);

// The window_size vLLM passes for a sliding window (0: none): (window - 1, 0), else (-1, -1)
// (FlashAttentionImpl.sliding_window).
struct fa3_window_size {
  int64_t left = -1, right = -1;
};
fa3_window_size fa3_window_size_of(int64_t window);

// The call's query heads per kv head, at least 1: the rows packed GQA makes of one token.
int64_t fa3_group_size(const fa3_call& c);

// FA3's mask after mha_fwd_get_scheduler_metadata's normalisation: a window_size_left >=
// max_seqlen_k - 1 is dropped (no window); one-token decode without a window is not causal unless
// 64 < head size <= 128 (paged KV); window_left / window_right as the kernel then holds them.
struct fa3_mask {
  bool causal = false, local = false;
  int64_t window_left = -1, window_right = -1;
};
fa3_mask fa3_mask_of(const fa3_call& c);

// kBlockM x kBlockN of tile_size_fwd_sm90 (`head_size_rounded`: 64, 96, 128, 192 or 256;
// `head_size_v_rounded`: mha_fwd's dv_rounded, 0 for head size v = head size), 16-bit elements, or
// e4m3 (element_size 1: the fork's FP8 branch with two-level accumulation, which vLLM's build leaves
// on: FLASHATTENTION_DISABLE_FP8_TWO_LEVEL_ACCUMULATION is set only by hopper/setup.py's
// environment switch; it does not read dv). Head size v changes the 16-bit tiles in two rows: at
// head size 192 a TMA tile is 128 keys wide for v <= 128 (96 otherwise), and at head size <= 64 a v
// of 256 or 512 takes tiles of its own.
struct fa3_tile {
  int64_t m = 0, n = 0;
};
fa3_tile fa3_tile_size(int64_t head_size_rounded, bool causal, bool local, bool paged_kv_non_tma,
                       bool one_mma_wg, bool e4m3 = false, int64_t head_size_v_rounded = 0);
// The same table in Dao-AILab's hopper/tile_size.h at 0251105 (no one-MMA-warpgroup tiles).
fa3_tile fa3_upstream_tile_size(int64_t head_size_rounded, bool causal, bool local, bool paged_kv_non_tma,
                                bool e4m3 = false, int64_t head_size_v_rounded = 0);

// The split count FA3 picks when told 0 (hopper/flash_api.cpp get_num_splits on SM90, varlen: the
// batch counts as 1, the query packed over the GQA group), then num_splits_heuristic
// (hopper/heuristics.h): 1 when kv_heads x m-blocks >= 0.8 x SMs (unless one kv head outgrows L2
// non-causally) or n-blocks <= 4, else the smallest count reaching 85% of the best wave efficiency,
// at most min(128, SMs, n-blocks).
int64_t fa3_heuristic_splits(const fa3_call& c);

// The tile of tile_size_fwd_sm90 a call runs with (one MMA warpgroup and paged-KV TMA as FA3 picks).
fa3_tile fa3_call_tile(const fa3_call& c);
// Whether the call reads the paged cache through TMA (get_pagedkv_tma: pages of whole key blocks,
// a packed query past one m-block; the vLLM fork keeps local attention off TMA).
bool fa3_paged_kv_tma(const fa3_call& c);

// The largest per-request split count the schedule writes (hopper/flash_prepare_scheduler.cu,
// prepare_varlen_num_blocks_kernel, one CTA: batch <= 992 and a static split count above 1):
// blocks_per_sm = ceil(1.1 x h_k x sum of m-blocks x n-blocks / SMs) (GQA packed), and a request's
// count max(min(ceil(n-blocks / blocks_per_sm), static), 1). 1 when the kernel sets every count to 1.
// fa3_dynamic_splits: every request's count.
std::vector<int64_t> fa3_dynamic_splits(const fa3_call& c, const std::vector<int32_t>& query_start,
                                        const std::vector<int32_t>& seq_lens, int64_t static_splits);
int64_t fa3_dynamic_splits_max(const fa3_call& c, const std::vector<int32_t>& query_start,
                               const std::vector<int32_t>& seq_lens, int64_t static_splits);

// head_swizzle = causal || local of the normalised mask (fa3_mask_of).
bool fa3_head_swizzle(int64_t max_query_len, int64_t max_seq_len, int64_t head_size, int64_t window);

// The persistent buffer's entries: 1 + 4 * round_up(max(max_num_seqs, max capture size), 4) (vLLM
// #34043), or a mutant's; 0 when the engine allocates none (no FULL graphs: a fresh tensor per call).
int64_t fa3_metadata_capacity(const engine_settings& s, const fa3_mutants& m);

struct fa3_plan {
  fa3_call sched_call;                           // what get_scheduler_metadata is called with
  fa3_call run_call;                             // what mha_fwd is called with (the layer's geometry)
  fa3_layout sched;                              // what it writes
  int64_t run_size = 0;                          // what mha_fwd recomputes from its own num_splits
                                                 // (and its layer's heads and head size)
  int64_t sched_splits = 0, run_splits = 0;      // as passed (0: the heuristic)
  int64_t sched_resolved = 0, run_resolved = 0;  // as used (the heuristic's where 0 was passed)
  int64_t sched_dynamic_max = 1;                 // the most splits the schedule gives one request
  std::vector<int32_t> query_start, seq_lens;    // the step's metadata rows, read per batch entry
  // scheduler_metadata (persistent, or exactly the layout's size), query_start_loc and seq_lens
  // (the model runner's persistent max_num_seqs + 1 / max_num_seqs int32 buffers).
  std::vector<buffer_plan> buffers;
  // No scheduler_metadata is passed (the builder makes no ahead-of-time schedule: a model of several
  // window configs, or a draft pass): mha_fwd prepares the call itself, on the layer's own geometry,
  // into a tensor of the layout's exact size it allocates per call. sched_call is then that call.
  bool in_call = false;
};

// The builder's per-group values (fa3_call without the step's lengths), and the geometry one layer
// runs with: mha_fwd takes its heads and head size from that layer's q and k tensors, while vLLM's
// builder schedules with the model's (0: the same as the schedule's).
struct fa3_group {
  int64_t q_heads = 1, kv_heads = 1, head_size = 128, page_size = 16, window = 0;
  int64_t run_q_heads = 0, run_kv_heads = 0, run_head_size = 0;
  bool e4m3 = false;  // an fp8 cache: schedule and run are e4m3 (fa3_call)
  // Head size v of the schedule call (0: vLLM's builder passes none) and of the layer's run (its v
  // tensor's; 0: the run's head size).
  int64_t head_size_v = 0, run_head_size_v = 0;
};

fa3_plan plan_fa3(const engine_settings& s, const engine_step& st, const fa3_group& g, const fa3_mutants& m);
// The call of a layer of geometry g (q_heads, kv_heads, head_size, window: the layer's own) when
// vLLM passes no scheduler_metadata: the split count it passes is the scheduled path's (the graph's
// under FULL graphs, else 0: flash_attn.py, build, max_num_splits), and the metadata is mha_fwd's
// own allocation, the layout's size. The schedule mutants do not apply: there is no schedule.
fa3_plan plan_fa3_in_call(const engine_settings& s, const engine_step& st, const fa3_group& g);

// What mha_fwd recomputes when call `r` (a layer's heads and head size over the schedule's step)
// runs plan p's metadata: the split count it uses (p.run_splits as passed, or its heuristic on r)
// and the metadata length it then expects (CHECK_SHAPE).
struct fa3_run {
  int64_t resolved = 1, size = 0;
};
fa3_run fa3_run_of(const fa3_plan& p, const fa3_call& r);
// The split count mha_fwd then launches with: one above a CTA's batch of prepared requests, else
// fa3_run_of's resolved count.
int64_t fa3_run_splits(const fa3_plan& p, const fa3_call& r);

// Why mha_fwd raises on a call of `q_heads` / `kv_heads` / `head_size` / `head_size_v` (0: the head
// size) (hopper/flash_api.cpp: head sizes of at most 256 and a multiple of 16 bytes' elements, 16 for
// e4m3 and 8 for 16-bit; a head size v apart from the head size only for a head size in (128, 192]
// with v in (96, 128], or a head size <= 64 with v <= 512 (16-bit above 256); query heads a multiple
// of kv heads), or "" when it runs it. Every head size it accepts runs on one of FA3's five kernels
// (64, 96, 128, 192, 256: run_mha_fwd takes the smallest that holds it).
std::string fa3_mha_fwd_refusal(int64_t q_heads, int64_t kv_heads, int64_t head_size, bool e4m3,
                                int64_t head_size_v = 0);

// mha_fwd's call for a layer of `q_heads` / `kv_heads` / `head_size` / `head_size_v` (from its q, k
// and v tensors; 0: the head size) and sliding window `window` (its impl's; 0: none) over the
// schedule's step and page size.
fa3_call fa3_layer_call(const fa3_call& sched, int64_t q_heads, int64_t kv_heads, int64_t head_size,
                        int64_t window, int64_t head_size_v = 0);

// The (token, head) rows FA3's forward kernel never computes when call `run` executes plan p's
// metadata. The kernel takes a request's m-blocks from the prepared metadata, made for the
// schedule's packed query (q x its query heads per kv head; flash_prepare_scheduler.cu,
// prepare_varlen_num_blocks_kernel; tile_scheduler.hpp, VarlenDynamicPersistentTileScheduler::
// tile_idx_to_work_tile, Prepared), while the layer packs q x its own group (row = token x group +
// head in the group). vLLM's fork stores the packed length (prepare_seqlen_q_ptr), which the kernel
// tiles by its own kBlockM: ceil(q x g_sched / M_run) m-blocks; Dao-AILab's stores the m-blocks of
// the schedule's tile (num_m_blocks_ptr): ceil(q x g_sched / M_sched). Per request and kv head the
// packed rows past m-blocks x M_run are never computed: garbage output. In the fork, 0 unless the
// layer's group is the larger; in Dao-AILab's, also where the layer's tile is the shorter.
int64_t fa3_rows_never_computed(const fa3_plan& p, const fa3_call& run);

// The (token, head) rows FA3's split combine never writes when call `run` executes plan p's metadata
// (vLLM's fork; Dao-AILab's combine gets no prepared lengths). A request the schedule gives one
// split is written by the forward kernel itself; the others are combined
// (hopper/flash_fwd_combine_kernel.h, FlashAttnFwdCombine). When the call's tiles are sparse
// (2 x ceil(total_q / M) < batch x ceil(max_seqlen_q / M), M = 16 for head size v <= 64, else 8)
// the combine linearises its tiles over the requests, giving request b ceil(prepare_seqlen_q[b] x
// h_k / M) m-blocks (get_num_m_blocks): the schedule's packed length, q x g_sched, over the layer's
// kv heads, while the request has q x h_run rows; and it launches ceil(total_q x h_run / M) + batch
// tiles, so requests past the last tile are not combined either. 0 with dense tiles (each request's
// m-blocks from its own length) or without splits.
int64_t fa3_rows_never_combined(const fa3_plan& p, const fa3_call& run);

// What one scheduling call touches: the layout's entries, and batch + 1 / batch metadata rows.
std::vector<buffer_need> fa3_needs(const fa3_plan& p);

}  // namespace headroom
