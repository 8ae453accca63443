// The engine settings of check, plan and fuzz on the command line (flag_tables.cpp's engine flags,
// named as vLLM names them, SGLang's as SGLang names them where it has a server argument) and from
// --engine-args FILE, a JSON file of vLLM's own engine arguments (docs/design.md "Command line":
// which keys are read, which are ignored, which are refused). The Python module reads its keyword
// arguments and engine_args with the same code.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/args.hpp"
#include "core/check/check.hpp"
#include "core/check/plan_file.hpp"
#include "generators/pinned.hpp"

namespace headroom::cli {

// Reads the --engine-args file, if given: each setting it holds becomes the value of its flag,
// unless the command line gives that flag (the command line overrides the file); a.origins
// remembers the file and key, so read_attributed reports a bad value there. Unknown keys,
// values of the wrong type, settings the mirror does not model and settings command `c` takes no
// flag for are input_errors naming the file and the key.
void merge_engine_args(parsed_args& a, const command_spec& c);
// The same for a document of engine arguments named `name` in messages (a file, the Python
// module's engine_args dict).
void merge_engine_args(parsed_args& a, const nlohmann::json& j, const std::string& name,
                       const command_spec& c);
// Flat settings named as vLLM names them (the Python module's keyword arguments: block_size,
// num_speculative_tokens, cudagraph_mode, ..., and engine_flavour), each the value of its flag,
// reported as `name` and the key. Call it before merge_engine_args: these override the engine
// arguments.
void merge_keyword_settings(parsed_args& a, const nlohmann::json& j, const std::string& name);

// SGLang's settings (engine_settings' req_pool_size, attn_tp_size, gathered_buffer,
// two_batch_overlap, attn_cp_size, cp_zigzag; the sglang
// flavour only), nullopt where not given. generators::pinned_settings has no field for them, so
// fuzz pins them after the generators draw a case (fuzz_campaign.hpp: sample_fuzz_case,
// keeps_pins).
struct sglang_settings {
  std::optional<int64_t> req_pool_size;   // --max-running-requests
  std::optional<int64_t> attn_tp_size;    // --attn-tp-size
  std::optional<bool> gathered_buffer;    // --gathered-buffer
  std::optional<bool> two_batch_overlap;  // --two-batch-overlap
  std::optional<int64_t> attn_cp_size;    // --attn-cp-size
  std::optional<bool> cp_zigzag;          // --cp-strategy zigzag|interleave
  bool empty() const {
    return !req_pool_size && !attn_tp_size && !gathered_buffer && !two_batch_overlap && !attn_cp_size &&
           !cp_zigzag;
  }
  bool operator==(const sglang_settings&) const = default;
};

// The engine settings flags given: vLLM's (and the mirror's own) as the generators' pins, SGLang's
// beside them.
struct engine_flag_settings {
  generators::pinned_settings pins;
  sglang_settings sglang;
};

// At most this many TP sizes in one --tp, each once: a check runs every one of them.
inline constexpr std::size_t max_tp_sizes = 64;

// The engine settings flags given (nullopt: not given), each range-checked, and the rules vLLM
// enforces between two of them. `max_num_seqs`: the requests a step holds when --max-num-seqs is
// not given (check and plan: 256); --max-num-batched-tokens must be at least it. Without it (fuzz:
// the cases draw max_num_seqs) only a given --max-num-seqs is held to that rule. --tp's sizes are
// in 1..largest_tp (check and plan: max_tp; fuzz: the largest its generators build).
// SGLang's flags need --engine-flavour sglang (an input_error naming the flag otherwise);
// --max-running-requests N is the request pool and, unless --max-num-seqs is given, the requests a
// step holds (SGLang runs at most the pool's requests: a given --max-num-seqs above N is refused).
engine_flag_settings read_engine_settings(const parsed_args& a, std::optional<int64_t> max_num_seqs,
                                          int64_t largest_tp = max_tp);

// Writes the given SGLang settings into `e`; true when `e` has every one of them.
void pin(const sglang_settings& s, engine_settings& e);
bool holds(const sglang_settings& s, const engine_settings& e);

// check and plan: the engine settings flags applied to `o`: o.tps, o.max_num_seqs, o.engine,
// o.block_size (and FlashInfer's page size). The dtype goes on the model (dtype_of).
void read_engine_flags(const parsed_args& a, check_options& o);
// With fa3 (PrefillSM90Plan) on any target but model: input_error naming `source` / `field` and
// fa3. The sim, gpu and engine targets run FA2-structured kernel bodies only.
void require_fa2_prefill_off_model(bool prefill_sm90, const std::string& target, const std::string& source,
                                   const std::string& field);
// The same for auto: an input_error naming `source` / `field` and auto when a case's FlashInfer group
// resolves to fa3 (its tp, group, wrapper and auto's reason in the message); on fuzz, whose cases
// are drawn, whenever auto is pinned.
void require_auto_fa2_off_model(const std::vector<check_case>& cases, const std::string& target,
                                const std::string& source, const std::string& field);
void require_auto_fa2_off_model(bool prefill_auto, const std::string& target, const std::string& source,
                                const std::string& field);
// verify's refusals, the command line's and the Python module's alike: a group's fa3 parameters,
// a cache no target but model judges, fa3 or an auto resolving to fa3 off the model target (each
// an input_error naming `source` and the plan's field); then the plan's cases (verify_cases).
std::vector<check_case> refused_or_verify_cases(const plan_file& p, const std::string& target,
                                                const std::string& source);

// The model dtype --kv-cache-dtype or --dtype asks for (nullopt: auto, the config's): queries,
// outputs and, unless the cache is fp8, the cache. A --kv-cache-dtype naming a model dtype wins
// over --dtype (the mirror then has one dtype); an fp8 one leaves the model's dtype to --dtype.
std::optional<dtype> dtype_of(const parsed_args& a);
// The cache's fp8 format --kv-cache-dtype asks for (vLLM's fp8, fp8_e4m3, fp8_e5m2): nullopt when
// not given or auto, kv_quant::none when it names a model dtype. vLLM's other quantised caches
// (fp8_inc, fp8_ds_mla, *_per_token_head, nvfp4*, turboquant_*) are input_errors: not modelled.
std::optional<kv_quant> kv_cache_of(const parsed_args& a);
// An fp8 cache on a target that runs kernel bodies (sim, gpu, engine: bf16 / fp16 / fp32 only),
// and fp8_e5m2 with `backends` holding fa3 (vLLM's FLASH_ATTN takes e4m3 only) or triton (vLLM's
// Attention.forward asserts e4m3 when it quantises q, which it does for TRITON_ATTN on CUDA):
// input_errors naming `source` / `field` and `value` (as given: fp8 for fp8_e4m3).
void require_cache_modelled(kv_quant q, const std::string& value, const std::string& target,
                            const std::vector<headroom::backend>& backends, const std::string& source,
                            const std::string& field);

// The flags that pin `p` (" --tp 1,2 --block-size 32 --kv-cache-dtype float16"), for fuzz's repro
// lines.
std::string flags_of(const generators::pinned_settings& p);
std::string flags_of(const sglang_settings& s);  // " --max-running-requests 20 --attn-tp-size 8 ..."

}  // namespace headroom::cli
