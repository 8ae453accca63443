// The flag table of every command (flags.hpp). A flag shared by several commands is one entry
// here, so its help is the same wherever it is accepted; the engine settings flags of check, plan
// and fuzz are named as vLLM names the setting, SGLang's as SGLang names its server argument where
// it has one, FlashInfer's decode path after the path, its prefill planner after the backend that
// picks it and vLLM's batch-invariant mode after its environment variable (docs/design.md "Command line");
// fuzz's pin the setting of every case.
#include <stdexcept>
#include <utility>

#include "cli/flags.hpp"

namespace headroom::cli {
namespace {

using k = flag_kind;

const flag_spec tp{"--tp", k::value, "1,2,4,8",
                   "TP sizes, comma-separated: at most 64 distinct values in 1..4096 (default 1)",
                   "vLLM tensor_parallel_size"};
const flag_spec backend{"--backend", k::value, "triton|flashinfer|fa3|all",
                        "attention backends (default triton and flashinfer; all adds fa3)",
                        "vLLM attention_backend"};
const flag_spec policy{"--policy", k::value, "per-layer|model-wide|max",
                       "how a builder's heads are resolved (default per-layer: the engines' fixed code)", ""};
const flag_spec grouping{"--grouping", k::value, "heads|legacy|proposer",
                         "how layers form attention groups (default heads)", ""};
const flag_spec max_num_seqs{"--max-num-seqs", k::value, "N",
                             "most requests a step holds, 1..4096 (default 256): check sweeps every decode "
                             "batch up to it",
                             "vLLM max_num_seqs"};
const flag_spec target{"--target", k::value, "model|sim|gpu|engine",
                       "what runs the cases: the formulas, the simulator, headroom's bodies on the device or "
                       "the engines' own kernels on it (HEADROOM_VLLM_DIR: docs/engine-kernels.md) "
                       "(default model)",
                       ""};
const flag_spec tight{"--tight", k::value, "K",
                      "also report a buffer more than K times its largest need (tight_bound; K >= 1)", ""};
const flag_spec json_out{"--json", k::value, "OUT.json",
                         "write the report as JSON (atomically, never over an input) before printing it", ""};
const flag_spec seed{"--seed", k::value, "S", "seed of the input values sim and gpu run on (default 0)", ""};
const flag_spec kv_layout{"--kv-layout", k::value, "separate|packed",
                          "KV-cache layout (default packed: vLLM's KV cache since #44455)", ""};
const flag_spec no_hybrid{"--no-hybrid", k::toggle, "",
                          "without the hybrid KV-cache manager: one KV-cache group for all layers",
                          "vLLM disable_hybrid_kv_cache_manager"};
const flag_spec cuda_graph{"--cuda-graph", k::toggle, "",
                           "FlashInfer's builders with CUDA graphs enabled (planner work items padded)",
                           "FlashInfer use_cuda_graph"};
const flag_spec mutant{"--mutant", k::repeat, "NAME",
                       "put back one historical wrong formula (headroom mutants lists them)", ""};

// The engine settings of check and plan (engine_flags.hpp reads them).
const std::vector<flag_spec> engine_flags = {
    {"--engine-args", k::value, "FILE",
     "engine arguments from a JSON file, as vLLM names them (SGLang's max_running_requests too); flags on "
     "the command line override it",
     ""},
    {"--max-model-len", k::value, "N", "longest sequence in tokens, 1..16777216 (default 4096)",
     "vLLM max_model_len"},
    {"--max-num-batched-tokens", k::value, "N",
     "most tokens a step holds, 1..16777216 and at least --max-num-seqs (default 8192)",
     "vLLM max_num_batched_tokens"},
    {"--block-size", k::value, "N",
     "KV-cache block size in tokens, 1..65536 (default 16); FlashInfer's page size too", "vLLM block_size"},
    {"--kv-cache-dtype", k::value, "auto|bfloat16|float16|float32|fp8|fp8_e4m3|fp8_e5m2",
     "KV-cache dtype (default auto: the model's); a model dtype here is the model's too, an fp8 one (fp8 = "
     "fp8_e4m3) a 1-byte cache under the model's queries and outputs, judged on --target model only "
     "(fp8_e5m2 with flashinfer only: vLLM's FLASH_ATTN refuses it, its TRITON_ATTN asserts)",
     "vLLM kv_cache_dtype"},
    {"--dtype", k::value, "auto|bfloat16|float16|float32",
     "the model's dtype (default auto: the config's); a --kv-cache-dtype naming a model dtype wins",
     "vLLM dtype"},
    {"--num-speculative-tokens", k::value, "K", "speculative tokens per step, 0..16 (default 0)",
     "vLLM speculative_config.num_speculative_tokens"},
    {"--spec-tokens", k::value, "K", "the old name of --num-speculative-tokens", ""},
    {"--cudagraph-mode", k::value, "MODE",
     "none|piecewise|full|full_decode_only|full_and_piecewise, or vLLM's upper-case names (default "
     "full_and_piecewise)",
     "vLLM compilation_config.cudagraph_mode"},
    {"--cudagraph-capture-sizes", k::value, "1,2,4,8",
     "CUDA-graph capture sizes in tokens: strictly ascending, at most 4096 in 1..16777216 (default vLLM's "
     "list)",
     "vLLM compilation_config.cudagraph_capture_sizes"},
    {"--max-cudagraph-capture-size", k::value, "N",
     "largest capture size, 1..16777216 (default min(2 x max_num_seqs x (1 + k), 512)); with a list, its "
     "largest",
     "vLLM compilation_config.max_cudagraph_capture_size"},
    {"--engine-flavour", k::value, "vllm|sglang|vllm-ascend",
     "whose per-request metadata sizing (C5) and CUDA-graph capture list the mirror follows (default vllm)",
     ""},
    {"--max-running-requests", k::value, "N",
     "SGLang (needs --engine-flavour sglang): the request pool, 1..4096 (default max_num_seqs); also "
     "--max-num-seqs when that is not given, at least it when it is",
     "SGLang max_running_requests"},
    {"--attn-tp-size", k::value, "N",
     "SGLang: the attention TP size, 1..64 (default 1); SGLang's is tp_size / dp_size under "
     "--enable-dp-attention",
     "SGLang get_attention_tp_size()"},
    {"--gathered-buffer", k::value, "true|false",
     "SGLang: graph batches padded to a multiple of the attention TP size (default false)",
     "SGLang require_gathered_buffer()"},
    {"--two-batch-overlap", k::value, "true|false",
     "SGLang: two-batch overlap, graph batches padded to a multiple of 2 (default false)",
     "SGLang --enable-two-batch-overlap"},
    {"--attn-cp-size", k::value, "N",
     "SGLang: the attention CP size, 1..64 (default 1); graph batches padded to it when the rest of the "
     "alignment is no multiple of it, DP-attention eager batches padded to it",
     "SGLang get_parallel().attn_cp_size"},
    {"--cp-strategy", k::value, "zigzag|interleave",
     "SGLang: prefill CP's sharding; zigzag (sequence split) pads DP-attention eager batches to twice the "
     "attention CP size (default interleave: once)",
     "SGLang --cp-strategy (get_cp_padding_align_size)"},
    {"--flashinfer-decode", k::value, "tensor-cores|cuda-cores",
     "FlashInfer's decode path: its prefill planner and kernel (tensor-cores, vLLM's since v0.10.2) or its "
     "decode plan and kernel (cuda-cores, vLLM's before for GQA groups up to 4) (default tensor-cores)",
     "FlashInfer use_tensor_cores"},
    {"--flashinfer-prefill", k::value, "fa2|fa3|auto",
     "FlashInfer's prefill planner, also for tensor-core decode: PrefillPlan (fa2), the Hopper "
     "PrefillSM90Plan (fa3), or each wrapper's as vLLM's backend=\"auto\" resolves it from the device, "
     "dtypes and head dim (auto: fa3 for prefill on sm90 with head dim 64, 128 or 256, fa2 for decode "
     "without fp8); fa3 is judged on --target model only (default fa2)",
     "FlashInfer backend"},
    {"--use-trtllm-attention", k::value, "true|false",
     "with an fp8 cache on sm90, false plans FlashInfer's decode wrapper with fp8 queries, so "
     "--flashinfer-prefill auto can pick fa3 for it (default: unset, bf16 / fp16 queries as for XQA decode)",
     "vLLM attention_config.use_trtllm_attention"},
    {"--batch-invariant", k::value, "true|false",
     "vLLM's batch-invariant mode: FlashInfer decoding on tensor cores, planned with split-KV disabled, "
     "a 2 GiB float workspace (default false)",
     "vLLM VLLM_BATCH_INVARIANT"},
    {"--head-tile", k::value, "N", "C9: an MLA kernel's minimum heads per rank, 0..1024 (default 0: none)",
     ""},
    {"--mamba-block-size", k::value, "N",
     "C11: the Mamba group's block size, 0..1048576 (default 0: the attention blocks')",
     "vLLM mamba_block_size"},
    {"--extra-group-block-size", k::value, "N",
     "C11: one more KV-cache group's block size (a drafter's, a ring buffer's), 0..1048576 (default 0: none)",
     ""},
};

// fuzz's engine settings: check's flags (names, metavars, the engine's names), each pinning the
// setting of every case instead of drawing it; the help says so.
const std::pair<std::string_view, std::string_view> fuzz_pins[] = {
    {"--tp",
     "TP sizes every case draws its own from (1 most often), comma-separated: at most 64 distinct values "
     "in 1..1024 (default 1,2,4,8)"},
    {"--engine-args",
     "pin the settings a JSON file of vLLM's engine arguments (and SGLang's max_running_requests) gives; "
     "flags override it"},
    {"--max-num-seqs", "pin every case's most requests a step holds, 1..4096 (default: drawn, 2..256)"},
    {"--max-model-len", "pin every case's longest sequence in tokens, 1..16777216 (default: drawn)"},
    {"--max-num-batched-tokens",
     "pin every case's most tokens a step holds, 1..16777216 and at least --max-num-seqs (default 8192; "
     "drawn max_num_seqs stay within it)"},
    {"--block-size",
     "pin every case's KV-cache block size, 1..65536, FlashInfer's page size too (default: drawn, 8, 16 or "
     "32)"},
    {"--kv-cache-dtype",
     "pin every case's KV-cache dtype (default auto: the drawn model dtype, and on --target model a drawn "
     "fp8 cache in about 1 case of 4): a model dtype pins the model's too, fp8 / fp8_e4m3 / fp8_e5m2 a "
     "1-byte cache, on --target model only (fp8_e5m2: --backend flashinfer)"},
    {"--dtype",
     "the model's dtype, pinned likewise (default auto: drawn); a --kv-cache-dtype naming a model dtype "
     "wins"},
    {"--num-speculative-tokens",
     "pin every case's speculative tokens per step, 0..16 (default: drawn, 0..3)"},
    {"--spec-tokens", "the old name of --num-speculative-tokens"},
    {"--cudagraph-mode",
     "pin every case's CUDA-graph mode: none|piecewise|full|full_decode_only|full_and_piecewise, or vLLM's "
     "upper-case names (default: drawn)"},
    {"--cudagraph-capture-sizes",
     "pin every case's capture sizes in tokens: strictly ascending, at most 4096 in 1..16777216 (default: "
     "drawn)"},
    {"--max-cudagraph-capture-size",
     "pin every case's largest capture size, 1..16777216 (vLLM's list up to it); with a list, its largest"},
    {"--engine-flavour",
     "pin every case's engine flavour, whose per-request sizing (C5) and capture list (default: drawn)"},
    {"--max-running-requests",
     "pin every case's SGLang request pool, 1..4096, and max_num_seqs unless given (needs "
     "--engine-flavour sglang; default: the pool is max_num_seqs)"},
    {"--attn-tp-size", "pin every case's SGLang attention TP size, 1..64 (default: drawn, 1, 2, 4 or 8)"},
    {"--gathered-buffer", "pin every case's SGLang gathered buffer, true or false (default: drawn)"},
    {"--two-batch-overlap", "pin every case's SGLang two-batch overlap, true or false (default: drawn)"},
    {"--attn-cp-size", "pin every case's SGLang attention CP size, 1..64 (default: drawn, 1, 2 or 3)"},
    {"--cp-strategy",
     "pin every case's SGLang CP strategy, zigzag or interleave (default: drawn, zigzag in half the cases "
     "of an attention CP size above 1)"},
    {"--flashinfer-decode",
     "pin every case's FlashInfer decode path, tensor-cores or cuda-cores (default: drawn, tensor cores in 1 "
     "of 3)"},
    {"--flashinfer-prefill",
     "pin every case's FlashInfer prefill planner, fa2, fa3 or auto (fa3 and auto: --target model only; "
     "default fa2, not drawn)"},
    {"--use-trtllm-attention",
     "pin every case's vLLM use_trtllm_attention: false gives FlashInfer's decode wrapper fp8 queries with "
     "an fp8 cache on sm90 (default: unset; drawn false in half the cases where it changes a plan: "
     "--target model, flashinfer, --flashinfer-prefill auto, fp8)"},
    {"--batch-invariant",
     "pin every case's split-KV switch: true disables it and decodes on tensor cores, as vLLM's "
     "batch-invariant mode (default: drawn, true in 1 of 4)"},
    {"--head-tile", "pin every case's C9 MLA head tile, 0..1024 (0: none; default: drawn, 0, 8, 16 or 32)"},
    {"--mamba-block-size",
     "pin every case's C11 Mamba block size, 0..1048576 (0: the attention blocks'; default: drawn, 0 or "
     "64..512, on the hybrid models cases draw)"},
    {"--extra-group-block-size",
     "pin every case's C11 extra KV-cache group's block size, 0..1048576 (0: none; default: drawn, 0, 4 "
     "or 8, on the hybrid models cases draw)"},
};

std::vector<flag_spec> pinning_flags() {
  std::vector<flag_spec> out;
  for (const auto& [name, help] : fuzz_pins) {
    const flag_spec* f = nullptr;
    for (const flag_spec* shared : {&tp, &max_num_seqs})
      if (shared->name == name) f = shared;
    for (const auto& e : engine_flags)
      if (e.name == name) f = &e;
    if (!f) throw std::logic_error("no engine flag named " + std::string(name));
    flag_spec pinned = *f;
    pinned.help = help;
    out.push_back(pinned);
  }
  return out;
}

std::vector<flag_spec> joined(std::vector<flag_spec> a, const std::vector<flag_spec>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<command_spec> make_specs() {
  std::vector<command_spec> c;
  c.push_back({"check",
               "CONFIG.json",
               "Checks every invariant of the model's plans on a sweep of steps, per TP size and backend",
               joined({tp, backend, policy, grouping, max_num_seqs, target, tight, json_out, seed, kv_layout,
                       no_hybrid, cuda_graph, mutant},
                      engine_flags),
               {}});
  c.push_back(
      {"fuzz",
       "",
       "Random cases from the property generators, each failure shrunk and written to --out",
       {{"--seed", k::value, "S", "campaign seed (default a fresh one, printed on stderr)", ""},
        {"--cases", k::value, "N", "run N cases, 1..2^40 (default 1000)", ""},
        {"--time", k::value, "60s", "run this long instead: a decimal number and s, m or h (at least 1 ns)",
         ""},
        {"--target", k::value, "sim|gpu|model|engine",
         "what runs the cases: the simulator, headroom's bodies on the device, the formulas or the "
         "engines' own kernels (default sim)",
         ""},
        {"--policy", k::value, "per-layer|model-wide|max", "the cases' head policy (default per-layer)", ""},
        {"--grouping", k::value, "heads|legacy|proposer", "the cases' grouping (default heads)", ""},
        {"--backend", k::value, "triton|flashinfer|fa3|all", "the cases' backends (default all)",
         "vLLM attention_backend"},
        {"--out", k::value, "DIR", "write each counterexample here as found (created if missing)", ""},
        {"--jobs", k::value, "N", "parallel jobs, 1..1024 (default 1; gpu: cases per device batch)", ""},
        {"--stop-after", k::value, "K", "stop after K distinct counterexamples", ""},
        {"--kv-layout", k::value, "separate|packed", "pin one KV-cache layout (default: cases draw both)",
         ""},
        mutant},
       {"(an engine setting not given is drawn per case;",
        " mpirun -np N headroom fuzz ...: one campaign sharded by rank)"}});
  c.back().flags = joined(c.back().flags, pinning_flags());
  c.push_back({"replay",
               "FILE",
               "Runs a stored case again: a case file, or a report written by --json",
               {target,
                {"--violation", k::value, "N", "replay only violation N of a report (from 0)", ""},
                mutant,
                json_out,
                tight},
               {"(FILE: a case, or a report written by --json)"}});
  c.push_back({"plan",
               "CONFIG.json",
               "Prints the mirror's plan: per rank and attention group the builders' parameters and buffers",
               joined({tp, backend, policy, grouping, max_num_seqs, kv_layout, no_hybrid, cuda_graph, mutant,
                       json_out},
                      engine_flags),
               {"(the mirror's plan: docs/plan-schema.md)"}});
  c.push_back({"verify",
               "PLAN.json",
               "Checks a plan an engine dumped (or an edited plan --json) with check's sweep",
               {target, tight, json_out},
               {}});
  c.push_back({"mutants",
               "",
               "Lists the catalogue's historical wrong formulas",
               {{"--json", k::value, "OUT.json|-", "write the list as JSON (- : on stdout)", ""}},
               {}});
  return c;
}

}  // namespace

const std::vector<command_spec>& command_specs() {
  static const std::vector<command_spec> specs = make_specs();
  return specs;
}

const command_spec* find_command(std::string_view name) {
  for (const auto& c : command_specs())
    if (c.name == name) return &c;
  return nullptr;
}

const command_spec& command(std::string_view name) {
  if (const command_spec* c = find_command(name)) return *c;
  throw std::logic_error("no command spec named " + std::string(name));
}

const flag_spec* find_flag(const command_spec& c, std::string_view flag) {
  for (const auto& f : c.flags)
    if (f.name == flag) return &f;
  return nullptr;
}

}  // namespace headroom::cli
