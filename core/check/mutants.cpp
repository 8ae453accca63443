// The mutant registry: one row per historical wrong formula, with its sources (upstream issues and
// pull requests, as facts) and the invariant that catches it.
#include "core/check/mutants.hpp"

#include <algorithm>
#include <array>

#include "core/util/error.hpp"

namespace headroom {
namespace {

constexpr std::array<const char*, 12> class_names = {"",   "C1", "C2", "C3", "C4",  "C5",
                                                     "C6", "C7", "C8", "C9", "C10", "C11"};
constexpr std::array<const char*, 12> class_titles = {
    "",
    "query heads from the model, not the group",
    "Triton 3D scratch from the model's head size and kv heads",
    "FlashAttention-3 scheduler metadata length",
    "block-table row width vs capture and dummy sequence lengths",
    "per-request metadata capacity vs the largest padded batch",
    "index offsets past 2^31 elements",
    "work that is empty after a per-layer transform",
    "plan / run disagreement in speculative-decoding draft passes",
    "head padding for small per-rank head counts",
    "CUDA-graph grid larger than the initialised work entries",
    "state index in the wrong block unit on hybrid models",
};

constexpr std::array<mutant_info, 20> mutants = {{
    {"model-wide-heads", bug_class::c1, "vLLM #41651, #43241, #47039, #50851", invariant::buffer_capacity,
     "builders sized with num_attention_heads // tp (FA3's schedule too)",
     "the group's layers' heads (#42650; FA3's builder #53002, #53336)"},
    {"legacy-grouping", bug_class::c1, "vLLM #41651, #43543, #45564", invariant::group_agreement,
     "attention groups keyed by (backend, spec)", "keyed by (backend, spec, num_heads)"},
    {"proposer-first-layer", bug_class::c1, "vLLM #41651 (spec-decode proposer path)",
     invariant::buffer_capacity, "the builder resolved from the first draft layer",
     "resolved from every layer of the group"},
    {"triton-model-head-size", bug_class::c2, "vLLM #41656, #56996", invariant::buffer_capacity,
     "softmax_segm_output padded for the model's head size", "the group's kv_cache_spec.head_size"},
    {"triton-model-kv-heads", bug_class::c2, "vLLM #56996, #54191", invariant::path_choice,
     "seq_threshold_3D = 128 // model kv heads", "128 // the group's kv_cache_spec.num_kv_heads"},
    {"fa3-metadata-old-layout", bug_class::c3, "vLLM #33841, #34043", invariant::buffer_capacity,
     "scheduler_metadata of max_num_seqs + 1 entries",
     "1 + 4 * round_up(max(max_num_seqs, max capture size), 4)"},
    {"fa3-metadata-no-roundup", bug_class::c3, "vLLM #23465, #34043", invariant::buffer_capacity,
     "scheduler_metadata of 4 * max(max_num_seqs, max capture size) + 1 entries",
     "1 + 4 * round_up(max batch, 4)"},
    {"fa3-split-mismatch", bug_class::c3, "vLLM #20301, #25490", invariant::plan_run_shape,
     "metadata scheduled with the graph's max_num_splits, the kernel run with the heuristic's",
     "one max_num_splits for schedule and run"},
    {"dummy-num-reqs-tokens", bug_class::c3, "vLLM #19171", invariant::buffer_capacity,
     "a dummy run builds metadata for num_reqs = num_tokens", "num_reqs = min(num_tokens, max_num_seqs)"},
    {"dummy-seq-lens-unclamped", bug_class::c4, "vLLM #53658, #53671", invariant::buffer_capacity,
     "a non-uniform dummy run gives every request seq_len = num_tokens",
     "dummy seq_lens clamped to max_model_len"},
    {"request-meta-from-pool", bug_class::c5, "SGLang #25124", invariant::buffer_capacity,
     "kv_indptr / kv_last_page_len sized by the request pool (+ 1); gathered graphs round past it",
     "the pool rounded up to the graph alignment, and the eager ceiling"},
    {"request-meta-graph-ceiling", bug_class::c5, "SGLang #40668", invariant::buffer_capacity,
     "per-request buffers sized by the CUDA-graph ceiling, eager warm-up pads higher",
     "the maximum of the graph and eager ceilings"},
    {"request-meta-max-num-seqs", bug_class::c5, "vllm-ascend #16168", invariant::buffer_capacity,
     "per-request buffers sized by max_num_seqs, graphs pad to the capture size plus a dummy",
     "max(max_num_seqs, max capture size) + the dummy request"},
    {"int32-token-offsets", bug_class::c6, "SGLang #20389, fla #1080", invariant::index_overflow,
     "token * stride (q's: the fused qkv row) computed in 32 bits", "64-bit offsets"},
    {"empty-work-unclamped", bug_class::c7, "vLLM #51970, #51972; DeepGEMM #353", invariant::out_of_bounds,
     "per-request work after the compression ratio left at 0", "work clamped to at least 1"},
    {"draft-reuses-verify-metadata", bug_class::c8, "vllm-musa #198; flashinfer #2801",
     invariant::plan_run_shape, "a one-token draft pass keeps the verify pass's query_start_loc",
     "query_start_loc = [0, 1, .., B] and max_query_len = 1 for draft passes"},
    {"head-pad-divisors-only", bug_class::c9, "vLLM #50578, #51088, #51040", invariant::buffer_capacity,
     "heads padded to h * (16 // h)", "padded to exactly the kernel's 16-head tile"},
    {"head-dim-from-hidden", bug_class::c9, "SGLang #30298", invariant::buffer_capacity,
     "head_dim = hidden_size // num_attention_heads", "the config's head_dim"},
    {"fi-graph-grid-unwritten", bug_class::c10,
     "flashinfer #4002, #4016, #4430, #4794; SGLang #31387, #34190", invariant::uninitialized_read,
     "CUDA graph + disable_split_kv: padded_batch_size = max(2 * SMs / kv heads, total_num_tiles_q), "
     "entries written for real tiles only, no block_valid_mask",
     "uniform_q_len passed and padded_batch_size = new_batch_size (B * ceil(q_len * G / cta_tile_q))"},
    {"mamba-index-min-block-size", bug_class::c11, "vLLM #53142, #55600, #55507", invariant::block_unit,
     "state column (n - 1) // cache_config.block_size (the minimum over groups)",
     "(n - 1) // the Mamba group's own block size"},
}};

}  // namespace

const char* to_string(bug_class c) { return class_names[static_cast<std::size_t>(c)]; }
const char* class_title(bug_class c) { return class_titles[static_cast<std::size_t>(c)]; }

std::span<const mutant_info> all_mutants() { return mutants; }

const mutant_info* find_mutant(std::string_view name) {
  for (const auto& m : mutants)
    if (m.name == name) return &m;
  return nullptr;
}

bool has_mutant(const mutant_set& s, std::string_view name) {
  return std::binary_search(s.begin(), s.end(), name);
}

mutant_set make_mutant_set(const std::vector<std::string>& names, const std::string& file,
                           const std::string& field) {
  mutant_set s;
  for (const auto& n : names) {
    if (!find_mutant(n))
      throw input_error(file, field, "\"" + n + "\"", "unknown mutant (headroom mutants lists them)");
    s.push_back(n);
  }
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

}  // namespace headroom
