// --engine-args FILE: vLLM's engine arguments from a JSON file, each read into the value of the
// flag that names the same setting (engine_flags.hpp). The file is read as every input is
// (core/util/json_file.hpp): a regular file of at most 64 MiB, bad JSON exit 2 naming the file.
// Keys the mirror does not model are refused, except the few documented as ignored: they choose
// what is loaded or how much memory it may take, never a buffer's shape.
#include <set>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/engine_flags.hpp"
#include "core/util/error.hpp"
#include "core/util/json_file.hpp"
#include "core/util/json_read.hpp"

namespace headroom::cli {
namespace {

using nlohmann::json;
namespace jr = headroom::json_read;

enum class kind { integer, int_list, text, boolean };

struct key_rule {
  const char* key;
  const char* flag;
  kind k;
};

const key_rule top_rules[] = {
    {"max_num_seqs", "--max-num-seqs", kind::integer},
    {"max_model_len", "--max-model-len", kind::integer},
    {"max_num_batched_tokens", "--max-num-batched-tokens", kind::integer},
    {"block_size", "--block-size", kind::integer},
    {"kv_cache_dtype", "--kv-cache-dtype", kind::text},
    {"dtype", "--dtype", kind::text},
    {"tensor_parallel_size", "--tp", kind::integer},
    {"cudagraph_capture_sizes", "--cudagraph-capture-sizes", kind::int_list},
    {"max_cudagraph_capture_size", "--max-cudagraph-capture-size", kind::integer},
    {"mamba_block_size", "--mamba-block-size", kind::integer},
    // SGLang's server arguments (max_running_requests, enable_two_batch_overlap, attn_cp_size,
    // cp_strategy), and
    // the mirror's two SGLang settings no server argument names
    // (docs/design.md): each needs --engine-flavour sglang, which no engine-arguments file names.
    {"max_running_requests", "--max-running-requests", kind::integer},
    {"attn_tp_size", "--attn-tp-size", kind::integer},
    {"gathered_buffer", "--gathered-buffer", kind::boolean},
    {"enable_two_batch_overlap", "--two-batch-overlap", kind::boolean},
    {"attn_cp_size", "--attn-cp-size", kind::integer},
    {"cp_strategy", "--cp-strategy", kind::text},
    // The mirror's FlashInfer decode path and prefill planner and vLLM's batch-invariant mode, which no
    // engine argument names: vLLM always decodes on tensor cores since v0.10.2 and reads VLLM_BATCH_INVARIANT
    // from the environment (docs/design.md).
    {"flashinfer_decode", "--flashinfer-decode", kind::text},
    {"flashinfer_prefill", "--flashinfer-prefill", kind::text},
    {"batch_invariant", "--batch-invariant", kind::boolean},
};
const key_rule compilation_rules[] = {
    {"cudagraph_mode", "--cudagraph-mode", kind::text},
    {"cudagraph_capture_sizes", "--cudagraph-capture-sizes", kind::int_list},
    {"max_cudagraph_capture_size", "--max-cudagraph-capture-size", kind::integer},
};
// vLLM's AttentionConfig (vllm/config/attention.py): use_trtllm_attention only, whose None (JSON
// null) is its default, auto.
const key_rule attention_rules[] = {
    {"use_trtllm_attention", "--use-trtllm-attention", kind::boolean},
};
const std::set<std::string> ignored_top = {"model",
                                           "tokenizer",
                                           "revision",
                                           "served_model_name",
                                           "trust_remote_code",
                                           "seed",
                                           "gpu_memory_utilization",
                                           "download_dir",
                                           "load_format"};
const std::set<std::string> ignored_compilation = {"mode",
                                                   "level",
                                                   "backend",
                                                   "custom_ops",
                                                   "splitting_ops",
                                                   "pass_config",
                                                   "compile_sizes",
                                                   "inductor_compile_config",
                                                   "use_inductor_graph_partition",
                                                   "cudagraph_num_of_warmups"};
// The Python module's keyword arguments: the top-level keys less the TP size (its `tp`), two
// nested settings under their own names, and the engine flavour, which no vLLM file names (SGLang's
// max_running_requests, attn_tp_size, gathered_buffer, enable_two_batch_overlap, attn_cp_size and
// cp_strategy, flashinfer_decode, flashinfer_prefill and batch_invariant are top-level keys).
const std::vector<key_rule>& keyword_rules() {
  static const std::vector<key_rule> rules = [] {
    std::vector<key_rule> r;
    for (const key_rule& k : top_rules)
      if (std::string(k.key) != "tensor_parallel_size") r.push_back(k);
    r.push_back({"num_speculative_tokens", "--num-speculative-tokens", kind::integer});
    r.push_back({"cudagraph_mode", "--cudagraph-mode", kind::text});
    r.push_back({"engine_flavour", "--engine-flavour", kind::text});
    return r;
  }();
  return rules;
}
// Drafters whose passes are the EAGLE proposer's, the only ones the mirror follows (docs/engines.md §12).
const std::set<std::string> spec_methods = {"eagle", "eagle3", "mtp"};

struct setting {
  std::string flag, value, key;
};

std::string value_text(const json& v, kind k, const std::string& file, const std::string& key) {
  switch (k) {
    case kind::integer:
      return std::to_string(jr::as_int(v, file, key, INT64_MIN, INT64_MAX));
    case kind::text:
      if (!v.is_string()) throw input_error(file, key, jr::shown(v), "expected a string");
      return v.get<std::string>();
    case kind::boolean:
      if (!v.is_boolean()) throw input_error(file, key, jr::shown(v), "expected true or false");
      return v.get<bool>() ? "true" : "false";
    case kind::int_list: {
      if (!v.is_array()) throw input_error(file, key, jr::shown(v), "expected a list of integers");
      std::string s;
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) s += ',';
        s +=
            std::to_string(jr::as_int(v[i], file, key + "[" + std::to_string(i) + "]", INT64_MIN, INT64_MAX));
      }
      if (s.empty()) throw input_error(file, key, "[]", "expected at least one capture size");
      return s;
    }
  }
  return {};
}

const json& object_at(const json& j, const std::string& key, const std::string& file) {
  if (!j.is_object()) throw input_error(file, key, jr::shown(j), "expected an object");
  return j;
}

// The keys of `obj` under `path` by `rules`; an ignored key is skipped, any other is refused.
void read_rules(const json& obj, std::span<const key_rule> rules, const std::set<std::string>& ignored,
                const std::string& path, const std::string& file, std::vector<setting>& out,
                const std::set<std::string>& handled = {}) {
  for (const auto& [key, v] : obj.items()) {
    if (ignored.count(key) || handled.count(key)) continue;
    const key_rule* r = nullptr;
    for (const auto& rule : rules)
      if (key == rule.key) r = &rule;
    if (!r)
      throw input_error(file, path + key, jr::shown(v),
                        "not an engine argument headroom models (docs/design.md)");
    out.push_back({r->flag, value_text(v, r->k, file, path + key), path + key});
  }
}

void read_speculative(const json& j, const std::string& file, std::vector<setting>& out) {
  object_at(j, "speculative_config", file);
  for (const auto& [key, v] : j.items())
    if (key != "method" && key != "num_speculative_tokens" && key != "model")
      throw input_error(file, "speculative_config." + key, jr::shown(v),
                        "not an engine argument headroom models (docs/design.md)");
  if (j.contains("method")) {
    const std::string m = value_text(j["method"], kind::text, file, "speculative_config.method");
    if (!spec_methods.count(m))
      throw input_error(
          file, "speculative_config.method", "\"" + m + "\"",
          "not modelled: the mirror's draft passes are the EAGLE proposer's (eagle, eagle3, mtp)");
  }
  if (!j.contains("num_speculative_tokens"))
    throw input_error(file, "speculative_config.num_speculative_tokens", "(missing)",
                      "required: the mirror does not read it from a draft model");
  out.push_back({"--num-speculative-tokens",
                 value_text(j["num_speculative_tokens"], kind::integer, file,
                            "speculative_config.num_speculative_tokens"),
                 "speculative_config.num_speculative_tokens"});
}

std::vector<setting> settings_of(const json& j, const std::string& file) {
  if (!j.is_object())
    throw input_error(file, "<engine args>", jr::shown(j), "expected an object of engine arguments");
  std::vector<setting> out;
  for (const char* dp :
       {"enable_dp_attention", "dp_size"})  // SGLang's, which the mirror reads as their result
    if (j.contains(dp))
      throw input_error(
          file, dp, jr::shown(j[dp]),
          "not modelled: give the attention TP size they make (attn_tp_size: tp_size / dp_size) "
          "and gathered_buffer (docs/design.md)");
  read_rules(j, top_rules, ignored_top, "", file, out,
             {"compilation_config", "speculative_config", "enforce_eager", "attention_config"});
  if (j.contains("attention_config") && !j["attention_config"].is_null()) {
    const json& a = object_at(j["attention_config"], "attention_config", file);
    const bool unset = a.contains("use_trtllm_attention") && a["use_trtllm_attention"].is_null();
    read_rules(a, attention_rules, {}, "attention_config.", file, out,
               unset ? std::set<std::string>{"use_trtllm_attention"} : std::set<std::string>{});
  }
  if (j.contains("compilation_config")) {
    const json& c = object_at(j["compilation_config"], "compilation_config", file);
    for (const char* twice : {"cudagraph_capture_sizes", "max_cudagraph_capture_size"})
      if (j.contains(twice) && c.contains(twice))
        throw input_error(file, twice, jr::shown(j[twice]), "given at the top and in compilation_config");
    read_rules(c, compilation_rules, ignored_compilation, "compilation_config.", file, out);
  }
  if (j.contains("speculative_config") && !j["speculative_config"].is_null())
    read_speculative(j["speculative_config"], file, out);
  if (j.contains("enforce_eager")) {  // vLLM: no CUDA graphs, whatever the mode says
    const json& e = j["enforce_eager"];
    if (!e.is_boolean()) throw input_error(file, "enforce_eager", jr::shown(e), "expected true or false");
    if (e.get<bool>()) {
      std::erase_if(out, [](const setting& s) { return s.flag == "--cudagraph-mode"; });
      out.push_back({"--cudagraph-mode", "none", "enforce_eager"});
    }
  }
  return out;
}

}  // namespace

void merge_engine_args(parsed_args& a, const command_spec& c) {
  if (const auto file = a.get("--engine-args")) merge_engine_args(a, read_json_file(*file), *file, c);
}

void merge_engine_args(parsed_args& a, const json& j, const std::string& name, const command_spec& c) {
  const bool spec_given = a.has("--spec-tokens") || a.has("--num-speculative-tokens");
  for (const setting& s : settings_of(j, name)) {
    if (!find_flag(c, s.flag))
      throw input_error(name, s.key, s.value,
                        "headroom " + std::string(c.name) + " does not take this setting (" + s.flag + ")");
    if (a.has(s.flag) || (s.flag == "--num-speculative-tokens" && spec_given)) continue;
    a.flags[s.flag] = s.value;
    a.origins[s.flag] = {name, s.key};
  }
}

void merge_keyword_settings(parsed_args& a, const json& j, const std::string& name) {
  if (!j.is_object()) throw input_error(name, "<settings>", jr::shown(j), "expected an object of settings");
  std::vector<setting> given;
  read_rules(j, keyword_rules(), {}, "", name, given);
  for (const setting& s : given) {
    a.flags[s.flag] = s.value;
    a.origins[s.flag] = {name, s.key};
  }
}

}  // namespace headroom::cli
