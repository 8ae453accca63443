// The engine settings flags of check, plan and fuzz (engine_flags.hpp): each value range-checked
// where it is read, and the rules vLLM itself enforces between two settings checked here, so that
// a setting the engine would refuse is exit 2, not a verdict.
#include "cli/engine_flags.hpp"

#include <algorithm>
#include <cctype>

#include "core/check/plans.hpp"
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
void check_ceiling(const std::vector<int64_t>& sizes, int64_t tokens, int64_t ceiling, const std::string& v) {
  int64_t largest = 0;
  for (int64_t size : sizes)
    if (size <= tokens) largest = size;
  if (ceiling != largest)
    throw input_error(cmdline, "--max-cudagraph-capture-size", v,
                      "must equal the largest of --cudagraph-capture-sizes within max_num_batched_tokens (" +
                          std::to_string(largest) + "), as vLLM requires");
}

std::optional<int64_t> int_flag(const parsed_args& a, const char* flag, int64_t lo, int64_t hi) {
  if (auto v = a.get(flag)) return to_int(flag, *v, lo, hi);
  return std::nullopt;
}

const char* const sglang_flags[] = {"--max-running-requests", "--attn-tp-size", "--gathered-buffer",
                                    "--two-batch-overlap",    "--attn-cp-size", "--cp-strategy"};

// A flag of two values: true for `yes`, false for `no`, nullopt where not given.
std::optional<bool> two_way_flag(const parsed_args& a, const char* flag, const std::string& yes,
                                 const std::string& no) {
  const auto v = a.get(flag);
  if (!v) return std::nullopt;
  if (*v != yes && *v != no)
    throw input_error(cmdline, flag, "\"" + *v + "\"", "expected " + yes + " or " + no);
  return *v == yes;
}

std::optional<bool> bool_flag(const parsed_args& a, const char* flag) {
  return two_way_flag(a, flag, "true", "false");
}

// SGLang's settings (docs/design.md "Command line": how they map from SGLang's server arguments).
// They size nothing under another flavour, so a flag of them without the sglang flavour is refused.
// --max-running-requests is SGLang's max_running_requests: ModelRunnerKVCacheMixin.init_memory
// makes the ReqToTokenPool that many requests, and the scheduler runs at most min(it / dp_size,
// the pool) of them, so it is also the requests a step holds unless --max-num-seqs says fewer.
sglang_settings read_sglang(const parsed_args& a, generators::pinned_settings& p) {
  for (const char* flag : sglang_flags)
    if (auto v = a.get(flag); v && p.flavour != engine_flavour::sglang)
      throw input_error(cmdline, flag, *v, "an SGLang setting: needs engine flavour sglang");
  sglang_settings s;
  s.req_pool_size = int_flag(a, "--max-running-requests", 1, max_check_num_seqs);
  s.attn_tp_size = int_flag(a, "--attn-tp-size", 1, max_settings_attn_tp);
  s.gathered_buffer = bool_flag(a, "--gathered-buffer");
  s.two_batch_overlap = bool_flag(a, "--two-batch-overlap");
  s.attn_cp_size = int_flag(a, "--attn-cp-size", 1, max_settings_attn_cp);
  s.cp_zigzag = two_way_flag(a, "--cp-strategy", "zigzag", "interleave");
  if (s.req_pool_size && !p.max_num_seqs) p.max_num_seqs = s.req_pool_size;
  if (s.req_pool_size && *p.max_num_seqs > *s.req_pool_size)
    throw input_error(cmdline, "--max-running-requests", std::to_string(*s.req_pool_size),
                      "must be at least max_num_seqs (" + std::to_string(*p.max_num_seqs) +
                          "): SGLang runs at most its request pool's requests");
  return s;
}

// FlashInfer's decode path, its prefill planner (fa2: PrefillPlan; fa3: PrefillSM90Plan; auto:
// each wrapper's as determine_attention_backend picks it, core/backends/fi_backend.hpp) and vLLM's
// batch-invariant mode (docs/design.md "Command line"). vLLM has disabled split-KV (VLLM_BATCH_INVARIANT,
// v0.11.1 on) only since it always decodes on tensor cores (v0.10.2), and FlashInfer's CUDA-core decode plan
// takes no such switch: --batch-invariant true is tensor-core decode too (a pin on fuzz), and with cuda-cores
// it models no vLLM release, so it is refused rather than half applied.
void read_flashinfer(const parsed_args& a, generators::pinned_settings& p) {
  if (auto tc = two_way_flag(a, "--flashinfer-decode", "tensor-cores", "cuda-cores"))
    p.tensor_core_decode = tc;
  if (auto v = a.get("--flashinfer-prefill")) {
    if (*v != "fa2" && *v != "fa3" && *v != "auto")
      throw input_error(cmdline, "--flashinfer-prefill", "\"" + *v + "\"", "expected fa2, fa3 or auto");
    p.prefill_sm90 = *v == "fa3";
    p.prefill_auto = *v == "auto";
  }
  if (const auto trtllm = bool_flag(a, "--use-trtllm-attention")) p.trtllm_attention_off = !*trtllm;
  // An fp8 cache decodes on tensor cores: the CUDA-core decode plan's occupancy depends on
  // sizeof(DTypeKV) (scheduler.cuh, BatchDecodeWithPagedKVCacheWorkEstimationDispatched) and the
  // mirror's table (h200_params) is measured for 16-bit caches.
  if (p.kv_cache.value_or(kv_quant::none) != kv_quant::none) {
    if (!p.tensor_core_decode.value_or(true))
      throw input_error(cmdline, "--flashinfer-decode", "cuda-cores",
                        "given with an fp8 KV cache: the CUDA-core decode plan's occupancy under fp8 is not "
                        "measured (vLLM decodes on tensor cores since v0.10.2)");
    p.tensor_core_decode = true;
  }
  p.disable_split_kv = bool_flag(a, "--batch-invariant");
  if (!p.disable_split_kv.value_or(false)) return;
  if (!p.tensor_core_decode.value_or(true))
    throw input_error(cmdline, "--batch-invariant", "true",
                      "given with cuda-cores decode: vLLM's batch-invariant mode (v0.11.1 on) always decodes "
                      "on tensor cores");
  p.tensor_core_decode = true;
}

std::string judged_on_model_only(const std::string& target) {
  return "PrefillSM90Plan is judged by --target model only: the " + target +
         " target runs FA2-structured kernel bodies";
}

}  // namespace

engine_flag_settings read_engine_settings(const parsed_args& a, std::optional<int64_t> max_num_seqs,
                                          int64_t largest_tp) {
  engine_flag_settings out;
  generators::pinned_settings& p = out.pins;
  if (auto v = a.get("--tp")) {
    p.tps = to_int_list("--tp", *v, 1, largest_tp, max_tp_sizes);
    require_distinct("--tp", *v, *p.tps);
  }
  p.max_num_seqs = int_flag(a, "--max-num-seqs", 1, max_check_num_seqs);
  if (auto v = a.get("--engine-flavour")) p.flavour = parse_engine_flavour(*v, cmdline, "--engine-flavour");
  out.sglang = read_sglang(a, p);  // --max-running-requests: max_num_seqs when not given
  p.max_model_len = int_flag(a, "--max-model-len", 1, max_settings_model_len);
  p.max_num_batched_tokens = int_flag(a, "--max-num-batched-tokens", 1, max_settings_tokens);
  const auto seqs = p.max_num_seqs ? p.max_num_seqs : max_num_seqs;
  if (p.max_num_batched_tokens && seqs && *p.max_num_batched_tokens < *seqs)  // vLLM's SchedulerConfig
    throw input_error(cmdline, "--max-num-batched-tokens", std::to_string(*p.max_num_batched_tokens),
                      "must be at least max_num_seqs (" + std::to_string(*seqs) + ")");
  p.block_size = int_flag(a, "--block-size", 1, max_block_size);
  if (a.has("--num-speculative-tokens") && a.has("--spec-tokens"))
    throw input_error(cmdline, "--spec-tokens", *a.get("--spec-tokens"),
                      "given with --num-speculative-tokens, its new name");
  for (const char* flag : {"--num-speculative-tokens", "--spec-tokens"})
    if (auto k = int_flag(a, flag, 0, max_settings_spec_tokens)) p.num_speculative_tokens = k;
  if (auto v = a.get("--cudagraph-mode")) p.cg_mode = mode_of("--cudagraph-mode", *v);
  if (auto v = a.get("--cudagraph-capture-sizes"))
    p.capture_sizes = capture_sizes_of("--cudagraph-capture-sizes", *v);
  p.max_capture_size = int_flag(a, "--max-cudagraph-capture-size", 1, max_settings_tokens);
  if (p.max_capture_size && p.capture_sizes)
    check_ceiling(*p.capture_sizes,
                  p.max_num_batched_tokens.value_or(engine_settings{}.max_num_batched_tokens),
                  *p.max_capture_size, *a.get("--max-cudagraph-capture-size"));
  p.head_tile = int_flag(a, "--head-tile", 0, max_settings_head_tile);
  p.mamba_block_size = int_flag(a, "--mamba-block-size", 0, max_settings_block_size);
  p.extra_group_block_size = int_flag(a, "--extra-group-block-size", 0, max_settings_block_size);
  p.kv_dtype = dtype_of(a);
  p.kv_cache = kv_cache_of(a);
  read_flashinfer(a, p);
  return out;
}

void pin(const sglang_settings& s, engine_settings& e) {
  if (s.req_pool_size) e.req_pool_size = *s.req_pool_size;
  if (s.attn_tp_size) e.attn_tp_size = *s.attn_tp_size;
  if (s.gathered_buffer) e.gathered_buffer = *s.gathered_buffer;
  if (s.two_batch_overlap) e.two_batch_overlap = *s.two_batch_overlap;
  if (s.attn_cp_size) e.attn_cp_size = *s.attn_cp_size;
  if (s.cp_zigzag) e.cp_zigzag = *s.cp_zigzag;
}

bool holds(const sglang_settings& s, const engine_settings& e) {
  engine_settings pinned = e;
  pin(s, pinned);
  return pinned == e;
}

void read_engine_flags(const parsed_args& a, check_options& o) {
  const engine_flag_settings s = read_engine_settings(a, o.max_num_seqs);
  const generators::pinned_settings& p = s.pins;
  if (p.tps) o.tps = *p.tps;
  if (p.max_num_seqs) o.max_num_seqs = *p.max_num_seqs;
  generators::pin(p, o.engine);
  pin(s.sglang, o.engine);
  if (p.block_size) o.block_size = o.flashinfer.page_size = *p.block_size;
  if (p.tensor_core_decode) o.flashinfer.tensor_core_decode = *p.tensor_core_decode;
  if (p.disable_split_kv) o.flashinfer.disable_split_kv = *p.disable_split_kv;
  if (p.prefill_sm90) o.flashinfer.prefill_sm90 = *p.prefill_sm90;
  if (p.prefill_auto) o.flashinfer.prefill_auto = *p.prefill_auto;
  if (p.trtllm_attention_off) o.flashinfer.trtllm_attention_off = *p.trtllm_attention_off;
}

void require_fa2_prefill_off_model(bool prefill_sm90, const std::string& target, const std::string& source,
                                   const std::string& field) {
  if (prefill_sm90 && target != "model")
    throw input_error(source, field, "fa3", judged_on_model_only(target));
}

void require_auto_fa2_off_model(const std::vector<check_case>& cases, const std::string& target,
                                const std::string& source, const std::string& field) {
  if (target == "model") return;
  for (const check_case& c : cases)
    if (c.flashinfer.prefill_auto)
      if (const auto where = fa3_wrapper_of(c))
        throw input_error(source, field, "auto",
                          "resolves to fa3 at " + *where + ": " + judged_on_model_only(target));
}

void require_auto_fa2_off_model(bool prefill_auto, const std::string& target, const std::string& source,
                                const std::string& field) {
  if (prefill_auto && target != "model")
    throw input_error(source, field, "auto",
                      "resolves to fa3 where a drawn head dim is 64, 128 or 256 (every case is sm90): " +
                          judged_on_model_only(target));
}

std::vector<check_case> refused_or_verify_cases(const plan_file& p, const std::string& target,
                                                const std::string& source) {
  for (const auto& r : p.ranks)
    for (const auto& g : r.groups)
      for (const char* name : {"fa3_prefill", "fa3_decode"})
        if (auto it = g.parameters.find(name); it != g.parameters.end())
          require_fa2_prefill_off_model(it->second != 0, target, source, std::string("parameters.") + name);
  std::vector<headroom::backend> backends;  // the plan's builders'
  for (const auto& r : p.ranks)
    for (const auto& g : r.groups) backends.push_back(g.be);
  require_cache_modelled(p.model.kv_cache, to_string(p.model.kv_cache), target, backends, source,
                         "model.kv_cache_dtype");
  require_fa2_prefill_off_model(p.flashinfer.prefill_sm90 && !p.flashinfer.prefill_auto, target, source,
                                "flashinfer.prefill_sm90");
  std::vector<check_case> cases = verify_cases(p);
  require_auto_fa2_off_model(cases, target, source, "flashinfer.prefill_auto");
  return cases;
}

namespace {

// vLLM's is_quantized_kv_cache (fp8*, *per_token_head, nvfp4*) and its turboquant_* caches.
bool quantised_cache_name(const std::string& v) {
  const auto ends_with = [&](const std::string& tail) {
    return v.size() >= tail.size() && v.compare(v.size() - tail.size(), tail.size(), tail) == 0;
  };
  return v.rfind("fp8", 0) == 0 || v.rfind("nvfp4", 0) == 0 || v.rfind("turboquant", 0) == 0 ||
         ends_with("per_token_head");
}

}  // namespace

std::optional<dtype> dtype_of(const parsed_args& a) {
  auto read = [&](const char* flag) -> std::optional<dtype> {
    const auto v = a.get(flag);
    if (!v || *v == "auto" || parse_kv_quant(*v)) return std::nullopt;
    if (quantised_cache_name(*v))
      throw input_error(cmdline, flag, *v,
                        "not modelled (the mirror's: auto, bfloat16, float16, float32" +
                            std::string(flag == std::string("--dtype") ? ")" : ", fp8, fp8_e4m3, fp8_e5m2)"));
    return parse_dtype(*v, cmdline, flag);
  };
  const auto v = a.get("--dtype");
  if (v && parse_kv_quant(*v))
    throw input_error(cmdline, "--dtype", *v,
                      "an fp8 model dtype is not modelled (fp8 is a cache dtype: --kv-cache-dtype)");
  const auto model = read("--dtype");
  const auto cache = read("--kv-cache-dtype");
  return cache ? cache : model;
}

std::optional<kv_quant> kv_cache_of(const parsed_args& a) {
  const auto v = a.get("--kv-cache-dtype");
  if (!v || *v == "auto") return std::nullopt;
  if (const auto q = parse_kv_quant(*v)) return q;
  dtype_of(a);  // any other value: a model dtype, or dtype_of's input_error
  return kv_quant::none;
}

void require_cache_modelled(kv_quant q, const std::string& value, const std::string& target,
                            const std::vector<headroom::backend>& backends, const std::string& source,
                            const std::string& field) {
  if (q == kv_quant::none) return;
  if (target != "model")
    throw input_error(source, field, value,
                      "an fp8 KV cache is judged by --target model only: the " + target +
                          " target runs bf16, fp16 and fp32 kernel bodies");
  const auto has = [&](headroom::backend b) {
    return std::find(backends.begin(), backends.end(), b) != backends.end();
  };
  if (q == kv_quant::fp8_e5m2 && has(headroom::backend::fa3))
    throw input_error(
        source, field, value,
        "vLLM's FLASH_ATTN (FA3) takes fp8 e4m3 caches only (flash_attn_supports_kv_cache_dtype); "
        "give --backend flashinfer");
  if (q == kv_quant::fp8_e5m2 && has(headroom::backend::triton))
    throw input_error(
        source, field, value,
        "vLLM's TRITON_ATTN runs with q quantised to fp8 on CUDA, which Attention.forward allows for "
        "fp8 / fp8_e4m3 caches only (docs/audit.md); give --backend flashinfer");
}

std::string flags_of(const generators::pinned_settings& p) {
  std::string s;
  auto add = [&](const char* flag, const std::optional<int64_t>& v) {
    if (v) ((s += ' ') += flag) += " " + std::to_string(*v);
  };
  auto add_list = [&](const char* flag, const std::optional<std::vector<int64_t>>& v) {
    if (!v) return;
    ((s += ' ') += flag) += ' ';
    for (std::size_t i = 0; i < v->size(); ++i) (s += i ? "," : "") += std::to_string((*v)[i]);
  };
  add_list("--tp", p.tps);
  add("--max-num-seqs", p.max_num_seqs);
  add("--max-model-len", p.max_model_len);
  add("--max-num-batched-tokens", p.max_num_batched_tokens);
  add("--block-size", p.block_size);
  if (p.kv_cache.value_or(kv_quant::none) != kv_quant::none) {  // the model's dtype apart
    if (p.kv_dtype) (s += " --dtype ") += to_string(*p.kv_dtype);
    (s += " --kv-cache-dtype ") += to_string(*p.kv_cache);
  } else if (p.kv_dtype) {
    (s += " --kv-cache-dtype ") += to_string(*p.kv_dtype);
  }
  add("--num-speculative-tokens", p.num_speculative_tokens);
  if (p.cg_mode) (s += " --cudagraph-mode ") += to_string(*p.cg_mode);
  add_list("--cudagraph-capture-sizes", p.capture_sizes);
  add("--max-cudagraph-capture-size", p.max_capture_size);
  if (p.flavour) (s += " --engine-flavour ") += to_string(*p.flavour);
  add("--head-tile", p.head_tile);
  add("--mamba-block-size", p.mamba_block_size);
  add("--extra-group-block-size", p.extra_group_block_size);
  if (p.tensor_core_decode)
    (s += " --flashinfer-decode ") += *p.tensor_core_decode ? "tensor-cores" : "cuda-cores";
  if (p.prefill_auto.value_or(false))
    s += " --flashinfer-prefill auto";
  else if (p.prefill_sm90)
    (s += " --flashinfer-prefill ") += *p.prefill_sm90 ? "fa3" : "fa2";
  if (p.trtllm_attention_off) (s += " --use-trtllm-attention ") += *p.trtllm_attention_off ? "false" : "true";
  if (p.disable_split_kv) (s += " --batch-invariant ") += *p.disable_split_kv ? "true" : "false";
  return s;
}

std::string flags_of(const sglang_settings& g) {
  std::string s;
  if (g.req_pool_size) s += " --max-running-requests " + std::to_string(*g.req_pool_size);
  if (g.attn_tp_size) s += " --attn-tp-size " + std::to_string(*g.attn_tp_size);
  if (g.gathered_buffer) s += std::string(" --gathered-buffer ") + (*g.gathered_buffer ? "true" : "false");
  if (g.two_batch_overlap)
    s += std::string(" --two-batch-overlap ") + (*g.two_batch_overlap ? "true" : "false");
  if (g.attn_cp_size) s += " --attn-cp-size " + std::to_string(*g.attn_cp_size);
  if (g.cp_zigzag) s += std::string(" --cp-strategy ") + (*g.cp_zigzag ? "zigzag" : "interleave");
  return s;
}

}  // namespace headroom::cli
