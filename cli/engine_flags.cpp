// The engine settings flags of check and plan (engine_flags.hpp): each value range-checked where
// it is read, and the rules vLLM itself enforces between two settings checked here, so that a
// setting the engine would refuse is exit 2, not a verdict.
#include "cli/engine_flags.hpp"

#include <algorithm>
#include <cctype>

#include "core/util/error.hpp"

namespace headroom::cli {
namespace {

inline constexpr int64_t max_block_size = 1 << 16;  // a case file's block_size range
inline constexpr std::size_t max_capture_sizes = 4096;

std::vector<int64_t> capture_sizes_of(const std::string& flag, const std::string& v) {
  const auto sizes = to_int_list(flag, v, 1, max_settings_tokens, max_capture_sizes);
  for (std::size_t i = 1; i < sizes.size(); ++i)
    if (sizes[i] <= sizes[i - 1])
      throw input_error(cmdline, flag, v,
                        "must be strictly ascending (" + std::to_string(sizes[i]) + " after " +
                            std::to_string(sizes[i - 1]) + ")");
  return sizes;
}

cudagraph_mode mode_of(const std::string& flag, const std::string& v) {
  std::string lower = v;  // vLLM's CUDAGraphMode names are upper case: FULL_AND_PIECEWISE
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  try {
    return parse_cudagraph_mode(lower, cmdline, flag);
  } catch (const input_error& e) {
    throw input_error(cmdline, flag, "\"" + v + "\"", e.why());
  }
}

// vLLM (VllmConfig._set_cudagraph_sizes) refuses a given ceiling that is not the largest given
// capture size within max_num_batched_tokens.
void check_ceiling(const engine_settings& s, const std::string& ceiling) {
  int64_t largest = 0;
  for (int64_t v : s.capture_sizes)
    if (v <= s.max_num_batched_tokens) largest = v;
  if (s.max_capture_size != largest)
    throw input_error(cmdline, "--max-cudagraph-capture-size", ceiling,
                      "must equal the largest of --cudagraph-capture-sizes within max_num_batched_tokens (" +
                          std::to_string(largest) + "), as vLLM requires");
}

}  // namespace

void read_engine_flags(const parsed_args& a, check_options& o) {
  engine_settings& s = o.engine;
  if (auto v = a.get("--max-model-len"))
    s.max_model_len = to_int("--max-model-len", *v, 1, max_settings_model_len);
  if (auto v = a.get("--max-num-batched-tokens"))
    s.max_num_batched_tokens = to_int("--max-num-batched-tokens", *v, 1, max_settings_tokens);
  if (s.max_num_batched_tokens < o.max_num_seqs)  // vLLM's SchedulerConfig refuses it
    throw input_error(cmdline, "--max-num-batched-tokens", std::to_string(s.max_num_batched_tokens),
                      "must be at least max_num_seqs (" + std::to_string(o.max_num_seqs) + ")");
  if (auto v = a.get("--block-size"))
    o.block_size = o.flashinfer.page_size = to_int("--block-size", *v, 1, max_block_size);
  if (a.has("--num-speculative-tokens") && a.has("--spec-tokens"))
    throw input_error(cmdline, "--spec-tokens", *a.get("--spec-tokens"),
                      "given with --num-speculative-tokens, its new name");
  for (const char* flag : {"--num-speculative-tokens", "--spec-tokens"})
    if (auto v = a.get(flag)) s.num_speculative_tokens = to_int(flag, *v, 0, max_settings_spec_tokens);
  if (auto v = a.get("--cudagraph-mode")) s.cg_mode = mode_of("--cudagraph-mode", *v);
  if (auto v = a.get("--cudagraph-capture-sizes"))
    s.capture_sizes = capture_sizes_of("--cudagraph-capture-sizes", *v);
  if (auto v = a.get("--max-cudagraph-capture-size")) {
    s.max_capture_size = to_int("--max-cudagraph-capture-size", *v, 1, max_settings_tokens);
    if (!s.capture_sizes.empty()) check_ceiling(s, *v);
  }
  if (auto v = a.get("--head-tile")) s.head_tile = to_int("--head-tile", *v, 0, max_settings_head_tile);
  if (auto v = a.get("--mamba-block-size"))
    s.mamba_block_size = to_int("--mamba-block-size", *v, 0, max_settings_block_size);
  if (auto v = a.get("--extra-group-block-size"))
    s.extra_group_block_size = to_int("--extra-group-block-size", *v, 0, max_settings_block_size);
}

std::optional<dtype> dtype_of(const parsed_args& a) {
  auto read = [&](const char* flag) -> std::optional<dtype> {
    const auto v = a.get(flag);
    if (!v || *v == "auto") return std::nullopt;
    if (v->rfind("fp8", 0) == 0)
      throw input_error(cmdline, flag, *v,
                        "fp8 is not modelled (the mirror's dtypes: bfloat16, float16, float32)");
    return parse_dtype(*v, cmdline, flag);
  };
  const auto model = read("--dtype");
  const auto cache = read("--kv-cache-dtype");
  return cache ? cache : model;
}

}  // namespace headroom::cli
