// Engine settings (vLLM v1, docs/engines.md §12): the limits (max_num_seqs, max_model_len,
// max_num_batched_tokens), CUDA-graph capture sizes and their default list, speculative tokens,
// and which step a case's batch is (a scheduled forward, a dummy run of warm-up or capture, a
// draft pass). The catalogue's classes (core/check/class_checks.hpp) size buffers from these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace headroom {

// vLLM's CUDAGraphMode; FULL* modes build attention metadata for captured graphs.
enum class cudagraph_mode { none, piecewise, full, full_decode_only, full_and_piecewise };
const char* to_string(cudagraph_mode m);
cudagraph_mode parse_cudagraph_mode(const std::string& s, const std::string& file, const std::string& field);
bool has_full_graphs(cudagraph_mode m);         // full, full_decode_only, full_and_piecewise
bool full_for_mixed_batches(cudagraph_mode m);  // full only: mixed warm-ups build metadata
bool full_for_decode(cudagraph_mode m);         // full_decode_only, full_and_piecewise: uniform decode

// Whose per-request metadata sizing the mirror follows (catalogue C5): vLLM's FlashInfer builder,
// SGLang's FlashInfer backend (request pool, attention-TP padding) or vllm-ascend (graph batches
// padded to the capture size plus one dummy request).
enum class engine_flavour { vllm, sglang, vllm_ascend };
const char* to_string(engine_flavour f);
engine_flavour parse_engine_flavour(const std::string& s, const std::string& file, const std::string& field);

struct engine_settings {
  int64_t max_num_seqs = 256;
  int64_t max_model_len = 4096;
  int64_t max_num_batched_tokens = 8192;
  int64_t num_speculative_tokens = 0;  // k: a verify pass of 1 + k tokens per request, k draft passes
  cudagraph_mode cg_mode = cudagraph_mode::full_and_piecewise;
  int64_t max_capture_size = 0;        // 0: vLLM's default rule (default_max_capture_size)
  std::vector<int64_t> capture_sizes;  // empty: vLLM's default list up to the max
  engine_flavour flavour = engine_flavour::vllm;
  int64_t req_pool_size = 0;           // SGLang: req_to_token_pool.size (0: max_num_seqs)
  int64_t attn_tp_size = 1;            // SGLang: attention TP size under DP attention
  bool gathered_buffer = false;        // SGLang: require_gathered_buffer (graph batches padded to attn TP)
  bool two_batch_overlap = false;      // SGLang: enable_two_batch_overlap (graph batches padded to 2)
  int64_t attn_cp_size = 1;            // SGLang: attn_cp_size (graph and DP-attention eager batches padded)
  bool cp_zigzag = false;              // SGLang: cp_strategy zigzag (that eager padding x2)
  int64_t head_tile = 0;               // C9: an MLA kernel's minimum heads per rank (16); 0: none
  int64_t mamba_block_size = 0;        // C11: the Mamba group's block size; 0: the attention blocks'
  int64_t extra_group_block_size = 0;  // C11: one more KV-cache group's (drafter, ring buffer); 0: none
  bool operator==(const engine_settings&) const = default;
};

// Which forward of the engine a case's batch is: a scheduled step (eager, or a graph replay padded
// to a capture size), a dummy run of `tokens` tokens (the warm-up and capture of a graph of that
// size; `uniform`: a uniform-decode dummy), or draft pass `pass` (1..k) of speculative decoding
// after the batch's verify pass; pass 0 is the drafter's one-token dummy pass that follows the
// verify pass in a FULL graph capture (vllm-musa #198).
enum class step_kind { forward, dummy, draft };
const char* to_string(step_kind k);
step_kind parse_step_kind(const std::string& s, const std::string& file, const std::string& field);

struct step_spec {
  step_kind kind = step_kind::forward;
  int64_t tokens = 0;    // dummy: the number of tokens
  bool uniform = false;  // dummy: uniform decode (1 + k tokens per request)
  int64_t pass = 0;      // draft: 1..num_speculative_tokens; 0: the capture's one-token draft pass
  bool operator==(const step_spec&) const = default;
};

// Limits on settings read from files.
inline constexpr int64_t max_settings_seqs = 1 << 16;
inline constexpr int64_t max_settings_model_len = int64_t{1} << 24;
inline constexpr int64_t max_settings_tokens = int64_t{1} << 24;
inline constexpr int64_t max_settings_spec_tokens = 16;
inline constexpr int64_t max_settings_attn_tp = 64;
inline constexpr int64_t max_settings_attn_cp = 64;
inline constexpr int64_t max_settings_head_tile = 1024;
inline constexpr int64_t max_settings_block_size = int64_t{1} << 20;

// Throws input_error naming `file` and the field (under `path`) for a setting out of range.
void validate(const engine_settings& s, const std::string& file, const std::string& path);
// Throws input_error naming the step's field when the step cannot run under these settings (a
// draft pass past num_speculative_tokens, a dummy run above max_num_batched_tokens).
void validate(const step_spec& st, const engine_settings& s, const std::string& file,
              const std::string& path);

// SGLang's request pool: req_pool_size, or max_num_seqs when 0.
int64_t request_pool_of(const engine_settings& s);
// SGLang's graph batch alignment (get_cuda_graph_batch_size_alignment, utils/common.py at 34af3ff):
// 1, x2 under two-batch overlap, x the attention TP size under require_gathered_buffer, then x the
// attention CP size when that does not divide it.
int64_t sglang_graph_multiple(const engine_settings& s);
// SGLang's largest graph batch in requests: the pool rounded up to sglang_graph_multiple.
int64_t sglang_max_graph_requests(const engine_settings& s);

// min(max_num_seqs * (1 + k) * 2, 512), then at most max_num_batched_tokens.
int64_t default_max_capture_size(const engine_settings& s);

// The capture sizes, ascending: the explicit list (sizes above max_num_batched_tokens dropped),
// or 1, 2, 4, 8..248 step 8, 256.. step 16 up to the max, plus max_num_batched_tokens when it is
// not above the max. With k > 0 and a FULL decode mode each size is rounded up to a multiple of
// 1 + k (sizes past the max dropped). For the sglang flavour (get_batch_sizes_to_capture) sizes
// above sglang_max_graph_requests x (1 + k) tokens are dropped, and that size is added when the
// list went past it. Empty when the mode captures no graph.
std::vector<int64_t> capture_sizes_of(const engine_settings& s);
int64_t max_capture_of(const engine_settings& s);  // the last capture size, 0 without graphs

// The capture size a step of n tokens replays (the smallest capture size >= n), or 0 when it runs
// eagerly (no graphs, or n above the largest capture size): eager steps are not padded.
int64_t padded_graph_size(const engine_settings& s, int64_t num_tokens);

}  // namespace headroom
