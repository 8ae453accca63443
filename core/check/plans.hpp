// The engine a case describes, and the plans its builders make: the registry, KV-cache groups and
// attention groups of one rank (make_engine), and per batch the plans of one attention group
// (docs/engines.md: Triton plans once per group; FlashInfer plans per batch and sends decode requests to its
// decode wrapper and the rest to its prefill wrapper, so a mixed batch yields two parts).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/backends/fi_backend.hpp"
#include "core/backends/plan.hpp"
#include "core/check/case.hpp"
#include "core/engine/engine.hpp"

namespace headroom {

struct engine {
  rank_geometry rg;
  registry reg;
  std::vector<kv_cache_group> kv_groups;
  std::vector<attention_group> groups;  // of the case's backend and grouping
};

// Throws input_error when the case's tp does not fit its geometry, or a dumped group names a layer
// the rank does not have.
engine make_engine(const check_case& c);

// The case's dump of this group's builder, or nullptr when the mirror plans it.
const builder_dump* dump_of(const check_case& c, const attention_group& ag);
// The dumped capacities of the buffers the dump names (by the mirror's names); no change without
// a dump. The class checks that plan persistent metadata (C3, C5) apply them too.
void apply_dumped_capacities(const check_case& c, const attention_group& ag,
                             std::vector<buffer_plan>& buffers);

// The model runner's persistent block table as the group's kernels see it: the dump's
// block_table [rows, width] when it has one, else max_num_seqs rows of vLLM's width (C4).
struct table_shape {
  int64_t rows = 0, width = 0;
};
table_shape block_table_of(const check_case& c, const attention_group& ag);

struct planned_part {
  any_plan plan;
  batch b;  // the requests this plan serves
};

// The policy and grouping the mirror runs: the case's, unless a C1 mutant switches them.
policy effective_policy(const check_case& c);
grouping effective_grouping(const check_case& c);
// The case's FlashInfer options with its C10 mutant applied (the pre-fix CUDA-graph grid), and the
// element sizes the planners read: the KV cache's (1 byte for fp8) and the output's (the model's).
flashinfer_options fi_options_of(const check_case& c);
// ... and the sliding window of the group's first builder layer (window_left = window - 1, as
// vLLM's builder plans it).
flashinfer_options fi_options_of(const check_case& c, const rank_geometry& rg, const attention_group& ag);
// FlashInfer's wrappers allocate an 8 MiB int workspace and a page-locked host buffer of its shape
// (decode.py / prefill.py); vLLM's builder passes neither, so those are what it plans into: the
// mirror's FlashInfer plans (DecodePlan, PrefillPlan, PrefillSM90Plan) carry them (plan_parts).
inline constexpr int64_t fi_int_workspace_default = int64_t{8} << 20;

// FlashInfer's plans for one step of b (builder geometry h / kv / hd): decode requests through the
// CUDA-core decode plan, or with o.tensor_core_decode through the prefill planner; the rest through
// the prefill planner (docs/engines.md §6, §7). Where wb gives a wrapper fa3 its prefill planner is
// PrefillSM90Plan (FlashInfer's fa3 backend): prefill causal, tensor-core decode not. o is
// fi_options_of's (its element sizes included).
std::vector<planned_part> flashinfer_parts(const check_case& c, int64_t h, int64_t kv, int64_t hd,
                                           const batch& b, flashinfer_options o,
                                           const fi_wrapper_backends& wb);

// The eager prefill step whose FlashInfer prefill plan has the most query tiles, so the most
// PrefillSM90Plan works, within the engine's limits (max_num_seqs requests, max_num_batched_tokens
// rows, max_model_len a request) for tiles of cta_tile_q rows: check runs it, plan prints its plan.
// Empty when no request of 2 rows fits. The reasoning is at the definition (fi_widest_step.cpp).
batch fi_prefill_widest_step(const engine_settings& e, int64_t cta_tile_q);
// The eager prefill step whose FA2 PrefillPlan carves the most int workspace bytes within the same
// limits, for `group` packed rows a query row (qo heads / kv heads) and the builder's head dim
// (its tile height) with o's kv dtype and device: check runs it for groups whose prefill wrapper
// runs fa2. Empty when no request of 2 rows fits. The reasoning is at the definition.
batch fi_fa2_widest_step(const engine_settings& e, int64_t group, int64_t head_dim,
                         const flashinfer_options& o);

// The backends of a FlashInfer group's prefill and tensor-core decode wrappers: its dump's
// fa3_prefill (both wrappers) and fa3_decode (the decode wrapper) where given, else the case's
// --flashinfer-prefill, auto resolved for the builder's head size (fi_wrapper_backends_of).
fi_wrapper_backends fi_backends_of(const check_case& c, const rank_geometry& rg, const attention_group& ag);
// The first FlashInfer group of the case whose prefill or tensor-core decode wrapper runs fa3, as
// "tp 1 group 0 prefill (reason)"; nullopt when none does (or the case is not FlashInfer's).
std::optional<std::string> fa3_wrapper_of(const check_case& c);

// vLLM's FlashAttention builder schedules FA3's metadata ahead of time only while every attention
// layer of the model has one window config (FlashAttentionImpl.sliding_window: (w - 1, 0), or (-1, -1)
// without a window; _get_sliding_window_configs, read on the builder's first build), and then with
// that window. The window (0: none) when it does; nullopt when the layers have two configs or more:
// aot_schedule is switched off, no scheduler_metadata is made, and FA3 prepares each call itself.
std::optional<int64_t> vllm_fa3_aot_window(const rank_geometry& rg);

// KV heads and head size the builder plans with: the group spec's (the fix), or for Triton the
// model-wide values under the triton-model-kv-heads / triton-model-head-size mutants; under
// head-dim-from-hidden (any backend) the head size is hidden_size // num_attention_heads when the
// model gives a hidden size.
int64_t builder_kv_heads(const check_case& c, const rank_geometry& rg, const attention_group& ag);
int64_t builder_head_size(const check_case& c, const rank_geometry& rg, const attention_group& ag);
// The head dim a FlashInfer group's builder plans with: its dump's head_dim, else builder_head_size.
int64_t fi_builder_head_dim(const check_case& c, const rank_geometry& rg, const attention_group& ag);
// ... and its kv heads: its dump's num_kv_heads, else builder_kv_heads.
int64_t fi_builder_kv_heads(const check_case& c, const rank_geometry& rg, const attention_group& ag);

// The attention plans of a batch (none for fa3, whose attention has no body here). Plans from a
// dump use its parameters and capacities (docs/plan-schema.md); FlashInfer's plans, made per step,
// also carry the dumped float workspace they are carved from.
std::vector<planned_part> plan_parts(const check_case& c, const rank_geometry& rg, const attention_group& ag,
                                     int64_t builder_heads, const batch& b);

}  // namespace headroom
