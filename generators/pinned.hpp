// Engine settings a user gives (fuzz's engine flags and --engine-args, named as vLLM names them;
// check's and plan's, which cli/engine_flags.hpp reads into the same struct): nullopt where not
// given. The case generators take a given setting instead of drawing it, and the fuzzer's
// shrinker keeps it, so every case of a campaign, and every counterexample it writes, has it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/check/case.hpp"

namespace headroom::generators {

struct pinned_settings {
  // TP sizes: check and plan run each; fuzz's cases draw theirs from the list (geometry_gen.hpp).
  std::optional<std::vector<int64_t>> tps;
  std::optional<int64_t> max_num_seqs;
  std::optional<int64_t> max_model_len;
  std::optional<int64_t> max_num_batched_tokens;
  std::optional<int64_t> block_size;  // the KV cache's, and FlashInfer's page size
  std::optional<dtype> kv_dtype;      // the model's dtype: queries, outputs, the cache unless fp8
  std::optional<kv_quant> kv_cache;   // the cache's fp8 format (none: the model's dtype); drawn on
                                      // the model target only (formula_gen.hpp)
  std::optional<int64_t> num_speculative_tokens;
  std::optional<cudagraph_mode> cg_mode;
  std::optional<std::vector<int64_t>> capture_sizes;
  std::optional<int64_t> max_capture_size;
  std::optional<engine_flavour> flavour;  // whose per-request sizing (C5) and capture list
  std::optional<int64_t> head_tile;       // C9 and C11 settings (class_gen.hpp draws them)
  std::optional<int64_t> mamba_block_size;
  std::optional<int64_t> extra_group_block_size;
  // FlashInfer's decode on tensor cores (its use_tensor_cores: the prefill planner and kernel), and
  // split-KV disabled (vLLM's VLLM_BATCH_INVARIANT): the case's flashinfer options.
  std::optional<bool> tensor_core_decode;
  std::optional<bool> disable_split_kv;
  std::optional<bool> prefill_sm90;  // FlashInfer's prefill planner: PrefillSM90Plan (fa3) or PrefillPlan
  std::optional<bool> prefill_auto;  // ... or each wrapper's as backend="auto" resolves it (auto)
  std::optional<bool> trtllm_attention_off;  // vLLM's use_trtllm_attention given as False
  bool operator==(const pinned_settings&) const = default;
};

// Writes the pinned engine settings into `e`. A pinned ceiling without a pinned list drops any
// drawn list: vLLM derives its default list from the ceiling; a max_num_seqs not pinned is cut
// to a pinned max_num_batched_tokens (the case generators draw it within the tokens already).
void pin(const pinned_settings& p, engine_settings& e);
// Every pinned setting of a case: its engine's, its block and page size, its model's dtype, its
// FlashInfer decode path, prefill planner and split-KV switch. Not the TP size, which the geometry's heads
// depend on: the generators draw it from the list.
void pin(const pinned_settings& p, check_case& c);
// True when the case has every pinned setting, and a TP size of the pinned list.
bool holds(const pinned_settings& p, const check_case& c);

}  // namespace headroom::generators
