// SGLang's FA3 decode schedule (docs/engines.md §13; python/sglang/srt/layers/attention/
// flashattention_backend.py at 34af3ff, FlashAttentionBackend): once per normal decode step
// _compute_scheduler_metadata calls get_scheduler_metadata with the model config's query heads,
// kv heads and head_dim over TP, max_seqlen_q 1, causal, no window and num_splits 0, and every
// layer that is not sliding-window passes the result to flash_attn_with_kvcache. The run (mha_fwd)
// recomputes the split count and the layout from its own layer's tensors and from the page table's
// width, since SGLang passes no max_seqlen_k. FA3 here is fa3_build::upstream (fa3.hpp).
#pragma once

#include <cstdint>

#include "core/backends/fa3.hpp"
#include "core/engine/settings.hpp"
#include "core/engine/steps.hpp"

namespace headroom {

// Which of FlashAttentionBackend's forwards a step is, for the precompute:
//   eager    init_forward_metadata: max_seqlen_k is the batch's longest sequence (seq_lens_cpu);
//            the page table is that many tokens wide
//   replay   _apply_cuda_graph_metadata: max_seqlen_k is max_context_len (the FA backend asks for
//            no host sequence lengths, needs_cpu_seq_lens False); the captured run's page table
//            is max_num_pages wide
//   capture  _init_full_cg_decode_metadata: max_seqlen_k is 1 (the capture's sequence lengths are
//            get_cuda_graph_seq_len_fill_value, 1); the same full-width page table
//   none     any other forward (extend, mixed, target verify, draft passes), which passes no
//            scheduler metadata, or settings under which SGLang skips the precompute
enum class sglang_fa3_pass { none, eager, replay, capture };
const char* to_string(sglang_fa3_pass p);

// none under DP attention or prefill context parallelism (_should_disable_scheduler_metadata_
// precompute; the mirror's attn_tp_size > 1 or gathered buffer stands for DP attention, as in
// sglang_eager_ceiling, and attn_cp_size > 1 for prefill CP), with speculative tokens (SGLang's
// decode is then target verify and draft passes), and under two-batch overlap (not mirrored: it
// splits the batch and publishes host sequence lengths). Otherwise a scheduled step whose requests
// each have one query token is a decode (replay when it replays a FULL graph), and a uniform
// dummy run is the capture of a decode graph of its size.
sglang_fa3_pass sglang_fa3_pass_of(const engine_settings& s, const engine_step& st);

// The schedule of one pass and what a layer's run expects of it. g holds the config's geometry
// over TP (q_heads = num_attention_heads // tp, kv_heads = get_num_kv_heads(tp), head_size =
// head_dim; g.head_size_v 0, as SGLang passes no headdim_v and get_scheduler_metadata then takes
// headdim_v = headdim; a value stands for a call that passed one), the KV
// cache's page size and window 0; g.run_* the layer's (0: the config's; run_head_size_v the v
// cache's last dimension, which mha_fwd reads as dv: 128 on MiMo-V2's layers of 192). The
// plan's rows are SGLang's: one query token per request (cu_seqlens_q = arange), padded graph rows
// of sequence length 1. Buffers: a graph pass writes the persistent _sched_meta_buf of
// 1 + 4 * round_up(max_bs, 4) entries and reads cu_seqlens_q / cache_seqlens of max_bs + 1 /
// max_bs (init_cuda_graph_state, max_bs the largest capture size); an eager pass gets fresh
// tensors of the batch's size.
fa3_plan plan_fa3_sglang(const engine_settings& s, const engine_step& st, sglang_fa3_pass pass,
                         const fa3_group& g);

}  // namespace headroom
