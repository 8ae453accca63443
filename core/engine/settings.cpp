// Engine settings: capture sizes (vLLM VllmConfig._set_cudagraph_sizes and
// adjust_cudagraph_sizes_for_spec_decode), padding at replay (CudagraphDispatcher).
#include "core/engine/settings.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "core/util/checked.hpp"
#include "core/util/error.hpp"
#include "core/util/names.hpp"

namespace headroom {
namespace {

constexpr name_table<cudagraph_mode, 5> mode_names = {{
    {cudagraph_mode::none, "none"},
    {cudagraph_mode::piecewise, "piecewise"},
    {cudagraph_mode::full, "full"},
    {cudagraph_mode::full_decode_only, "full_decode_only"},
    {cudagraph_mode::full_and_piecewise, "full_and_piecewise"},
}};
constexpr name_table<step_kind, 3> step_names = {
    {{step_kind::forward, "forward"}, {step_kind::dummy, "dummy"}, {step_kind::draft, "draft"}}};
constexpr name_table<engine_flavour, 3> flavour_names = {{{engine_flavour::vllm, "vllm"},
                                                          {engine_flavour::sglang, "sglang"},
                                                          {engine_flavour::vllm_ascend, "vllm-ascend"}}};

void check_range(const std::string& file, const std::string& field, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi)
    throw input_error(file, field, std::to_string(v),
                      "must be in " + std::to_string(lo) + ".." + std::to_string(hi));
}

// SGLang captures no batch above the (rounded) request pool, and captures the pool itself when the
// list goes past it; a size is tokens here, 1 + k per request (within max_num_batched_tokens).
void clamp_to_request_pool(const engine_settings& s, std::vector<int64_t>& sizes) {
  if (sizes.empty()) return;
  const int64_t top = checked_mul(sglang_max_graph_requests(s), 1 + s.num_speculative_tokens, "capture size");
  const bool past = sizes.back() > top;
  std::erase_if(sizes, [&](int64_t v) { return v > top; });
  if (past && top <= s.max_num_batched_tokens && (sizes.empty() || sizes.back() != top)) sizes.push_back(top);
}

}  // namespace

const char* to_string(cudagraph_mode m) { return name_in(mode_names, m, "unknown"); }

cudagraph_mode parse_cudagraph_mode(const std::string& s, const std::string& file, const std::string& field) {
  return parse_in(mode_names, s, file, field);
}

const char* to_string(step_kind k) { return name_in(step_names, k, "unknown"); }

step_kind parse_step_kind(const std::string& s, const std::string& file, const std::string& field) {
  return parse_in(step_names, s, file, field);
}

bool has_full_graphs(cudagraph_mode m) {
  return m == cudagraph_mode::full || m == cudagraph_mode::full_decode_only ||
         m == cudagraph_mode::full_and_piecewise;
}

bool full_for_mixed_batches(cudagraph_mode m) { return m == cudagraph_mode::full; }

bool full_for_decode(cudagraph_mode m) {
  return m == cudagraph_mode::full_decode_only || m == cudagraph_mode::full_and_piecewise;
}

const char* to_string(engine_flavour f) { return name_in(flavour_names, f, "unknown"); }

engine_flavour parse_engine_flavour(const std::string& s, const std::string& file, const std::string& field) {
  return parse_in(flavour_names, s, file, field);
}

int64_t request_pool_of(const engine_settings& s) {
  return s.req_pool_size > 0 ? s.req_pool_size : s.max_num_seqs;
}

int64_t sglang_graph_multiple(const engine_settings& s) {
  int64_t m = s.two_batch_overlap ? 2 : 1;
  if (s.gathered_buffer) m *= s.attn_tp_size;
  if (m % s.attn_cp_size != 0) m *= s.attn_cp_size;
  return m;
}

int64_t sglang_max_graph_requests(const engine_settings& s) {
  const int64_t m = sglang_graph_multiple(s);
  return ceil_div(request_pool_of(s), m) * m;
}

void validate(const engine_settings& s, const std::string& file, const std::string& path) {
  check_range(file, path + "max_num_seqs", s.max_num_seqs, 1, max_settings_seqs);
  check_range(file, path + "max_model_len", s.max_model_len, 1, max_settings_model_len);
  check_range(file, path + "max_num_batched_tokens", s.max_num_batched_tokens, 1, max_settings_tokens);
  check_range(file, path + "num_speculative_tokens", s.num_speculative_tokens, 0, max_settings_spec_tokens);
  check_range(file, path + "max_capture_size", s.max_capture_size, 0, max_settings_tokens);
  check_range(file, path + "head_tile", s.head_tile, 0, max_settings_head_tile);
  check_range(file, path + "mamba_block_size", s.mamba_block_size, 0, max_settings_block_size);
  check_range(file, path + "extra_group_block_size", s.extra_group_block_size, 0, max_settings_block_size);
  if (s.capture_sizes.size() > 4096)
    throw input_error(file, path + "capture_sizes", std::to_string(s.capture_sizes.size()) + " sizes",
                      "at most 4096 capture sizes");
  for (std::size_t i = 0; i < s.capture_sizes.size(); ++i)
    check_range(file, path + "capture_sizes[" + std::to_string(i) + "]", s.capture_sizes[i], 1,
                max_settings_tokens);
  check_range(file, path + "req_pool_size", s.req_pool_size, 0, max_settings_seqs);
  check_range(file, path + "attn_tp_size", s.attn_tp_size, 1, max_settings_attn_tp);
  check_range(file, path + "attn_cp_size", s.attn_cp_size, 1, max_settings_attn_cp);
}

void validate(const step_spec& st, const engine_settings& s, const std::string& file,
              const std::string& path) {
  if (st.kind == step_kind::draft && st.pass > s.num_speculative_tokens)
    throw input_error(
        file, path + "pass", std::to_string(st.pass),
        "draft pass above engine.num_speculative_tokens " + std::to_string(s.num_speculative_tokens));
  if (st.kind == step_kind::draft && st.pass == 0 &&
      (s.num_speculative_tokens == 0 || !has_full_graphs(s.cg_mode)))
    throw input_error(file, path + "pass", "0",
                      "the capture's draft pass needs engine.num_speculative_tokens >= 1 and FULL graphs");
  if (st.kind == step_kind::dummy && st.tokens > s.max_num_batched_tokens)
    throw input_error(file, path + "tokens", std::to_string(st.tokens),
                      "a dummy run is at most engine.max_num_batched_tokens " +
                          std::to_string(s.max_num_batched_tokens) + " tokens");
  // vLLM's _dummy_run asserts a uniform decode dummy fits its requests: at most max_num_seqs of
  // 1 + num_speculative_tokens tokens each.
  const int64_t per_request = 1 + s.num_speculative_tokens;
  if (st.kind == step_kind::dummy && st.uniform && st.tokens > per_request * s.max_num_seqs)
    throw input_error(file, path + "tokens", std::to_string(st.tokens),
                      "a uniform decode dummy run is at most engine.max_num_seqs x (1 + "
                      "engine.num_speculative_tokens) = " +
                          std::to_string(per_request * s.max_num_seqs) + " tokens");
}

int64_t default_max_capture_size(const engine_settings& s) {
  const int64_t q = 1 + s.num_speculative_tokens;
  const int64_t m = std::min<int64_t>(checked_product("capture size", s.max_num_seqs, q, 2), 512);
  return std::min(m, s.max_num_batched_tokens);
}

std::vector<int64_t> capture_sizes_of(const engine_settings& s) {
  if (s.cg_mode == cudagraph_mode::none) return {};
  std::vector<int64_t> out;
  int64_t m = s.max_capture_size > 0 ? s.max_capture_size : default_max_capture_size(s);
  if (!s.capture_sizes.empty()) {
    for (int64_t v : s.capture_sizes)
      if (v <= s.max_num_batched_tokens) out.push_back(v);
  } else {
    m = std::min(m, s.max_num_batched_tokens);
    for (int64_t v : {1, 2, 4})
      if (v <= m) out.push_back(v);
    for (int64_t v = 8; v < std::min<int64_t>(m + 1, 256); v += 8) out.push_back(v);
    for (int64_t v = 256; v <= m; v += 16) out.push_back(v);
    if (s.max_num_batched_tokens <= m) out.push_back(s.max_num_batched_tokens);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  const int64_t q = 1 + s.num_speculative_tokens;
  const bool full_decode = s.cg_mode != cudagraph_mode::piecewise;
  if (q > 1 && full_decode && !out.empty()) {  // sizes rounded up to whole verify passes
    const int64_t top = out.back();
    std::vector<int64_t> r;
    for (int64_t v : out)
      if (ceil_div(v, q) * q <= top) r.push_back(ceil_div(v, q) * q);
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    if (r.empty() && q <= top) r.push_back(q);
    out = std::move(r);
  }
  if (s.flavour == engine_flavour::sglang) clamp_to_request_pool(s, out);
  return out;
}

int64_t max_capture_of(const engine_settings& s) {
  const auto sizes = capture_sizes_of(s);
  return sizes.empty() ? 0 : sizes.back();
}

int64_t padded_graph_size(const engine_settings& s, int64_t num_tokens) {
  for (int64_t v : capture_sizes_of(s))
    if (v >= num_tokens) return v;
  return 0;
}

}  // namespace headroom
