// The engine settings on the command line and from --engine-args (cli/engine_flags.hpp): a bad
// value is exit 2 with one line naming the flag (or the file and key) and the value; a setting
// changes the verdict as the formulas say it must (values computed by hand below); and vLLM
// #53658 reproduced from its reported settings in one command line.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.hpp"

namespace {

using namespace headroom_test;
using nlohmann::json;

void expect_one_line(const cli_result& r, std::initializer_list<std::string> pieces) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  for (const auto& p : pieces) EXPECT_NE(r.err.find(p), std::string::npos) << p << " in " << r.err;
}

const std::string laguna = source_path("configs/laguna-xs2.json");

TEST(EngineSettings, BadValuesNameTheFlagAndTheValue) {
  const std::pair<std::string, std::vector<std::string>> cases[] = {
      {"--cudagraph-capture-sizes 1,4,2", {"'--cudagraph-capture-sizes' = 1,4,2", "strictly ascending"}},
      {"--cudagraph-capture-sizes 1,2,2", {"'--cudagraph-capture-sizes' = 1,2,2", "strictly ascending"}},
      {"--cudagraph-capture-sizes 0,8", {"'--cudagraph-capture-sizes' = 0", "1..16777216"}},
      {"--cudagraph-capture-sizes 1,,8", {"'--cudagraph-capture-sizes'", "expected an integer"}},
      {"--max-cudagraph-capture-size 0", {"'--max-cudagraph-capture-size' = 0", "1..16777216"}},
      {"--cudagraph-capture-sizes 1,2,4 --max-cudagraph-capture-size 8",
       {"'--max-cudagraph-capture-size' = 8", "largest", "(4)"}},
      {"--block-size 0", {"'--block-size' = 0", "1..65536"}},
      {"--block-size 65537", {"'--block-size' = 65537", "1..65536"}},
      {"--max-num-batched-tokens 255", {"'--max-num-batched-tokens' = 255", "at least max_num_seqs (256)"}},
      {"--kv-cache-dtype fp8_inc", {"'--kv-cache-dtype' = fp8_inc", "not modelled"}},
      {"--kv-cache-dtype int8", {"'--kv-cache-dtype' = \"int8\"", "unsupported dtype"}},
      {"--dtype double", {"'--dtype' = \"double\"", "unsupported dtype"}},
      {"--num-speculative-tokens 17", {"'--num-speculative-tokens' = 17", "0..16"}},
      {"--spec-tokens 1 --num-speculative-tokens 1", {"'--spec-tokens' = 1", "--num-speculative-tokens"}},
      {"--cudagraph-mode FULLY", {"'--cudagraph-mode' = \"FULLY\"", "full_and_piecewise"}},
      {"--no-hybrid=yes", {"'--no-hybrid' = yes", "takes no value"}},
      {"--engine-flavour vllm_ascend",
       {"'--engine-flavour' = \"vllm_ascend\"", "expected vllm, sglang or vllm-ascend"}},
      {"--engine-flavour", {"'--engine-flavour' = (missing)", "takes a value"}},
      // SGLang's settings: only under the sglang flavour, each in its range, the pool at least the
      // requests a step holds.
      {"--max-running-requests 20",
       {"'--max-running-requests' = 20", "an SGLang setting: needs engine flavour sglang"}},
      {"--engine-flavour vllm-ascend --attn-tp-size 2",
       {"'--attn-tp-size' = 2", "an SGLang setting: needs engine flavour sglang"}},
      {"--gathered-buffer false", {"'--gathered-buffer' = false", "an SGLang setting"}},
      {"--engine-flavour sglang --max-running-requests 0", {"'--max-running-requests' = 0", "1..4096"}},
      {"--engine-flavour sglang --max-running-requests 4097", {"'--max-running-requests' = 4097", "1..4096"}},
      {"--engine-flavour sglang --max-running-requests 2x",
       {"'--max-running-requests' = \"2x\"", "expected an integer"}},
      {"--engine-flavour sglang --max-num-seqs 64 --max-running-requests 20",
       {"'--max-running-requests' = 20", "at least max_num_seqs (64)", "request pool"}},
      {"--engine-flavour sglang --attn-tp-size 0", {"'--attn-tp-size' = 0", "1..64"}},
      {"--engine-flavour sglang --attn-tp-size 65", {"'--attn-tp-size' = 65", "1..64"}},
      {"--engine-flavour sglang --gathered-buffer yes",
       {"'--gathered-buffer' = \"yes\"", "expected true or false"}},
      {"--engine-flavour sglang --gathered-buffer", {"'--gathered-buffer' = (missing)", "takes a value"}},
      {"--two-batch-overlap true", {"'--two-batch-overlap' = true", "an SGLang setting"}},
      {"--attn-cp-size 3", {"'--attn-cp-size' = 3", "an SGLang setting"}},
      {"--engine-flavour sglang --two-batch-overlap on",
       {"'--two-batch-overlap' = \"on\"", "expected true or false"}},
      {"--engine-flavour sglang --attn-cp-size 0", {"'--attn-cp-size' = 0", "1..64"}},
      {"--engine-flavour sglang --attn-cp-size 65", {"'--attn-cp-size' = 65", "1..64"}},
      {"--engine-flavour sglang --attn-cp-size 2x", {"'--attn-cp-size' = \"2x\"", "expected an integer"}},
      {"--cp-strategy zigzag", {"'--cp-strategy' = zigzag", "an SGLang setting"}},
      {"--engine-flavour sglang --cp-strategy ring",
       {"'--cp-strategy' = \"ring\"", "expected zigzag or interleave"}},
  };
  for (const auto& [flags, pieces] : cases) {
    const auto r = run_cli("check " + laguna + " " + flags);
    EXPECT_EQ(r.code, 2) << flags;
    EXPECT_EQ(r.err_lines(), 1) << flags << ": " << r.err;
    for (const auto& p : pieces) EXPECT_NE(r.err.find(p), std::string::npos) << p << " in " << r.err;
  }
  // The old and the new name of the speculative tokens, and vLLM's upper-case mode names, run;
  // so do SGLang's settings at the ends of their ranges and a pool larger than a step.
  for (const char* ok :
       {"--spec-tokens 1", "--num-speculative-tokens 1", "--cudagraph-mode FULL_AND_PIECEWISE",
        "--engine-flavour sglang --max-running-requests 4096 --attn-tp-size 64",
        "--engine-flavour sglang --max-num-seqs 1 --max-running-requests 1 --attn-tp-size 1",
        "--engine-flavour sglang --max-num-seqs 5 --max-running-requests 21 --gathered-buffer false",
        "--engine-flavour sglang --two-batch-overlap true --attn-cp-size 64"})
    EXPECT_EQ(run_cli("plan " + laguna + " " + ok).code, 0) << ok;
}

// The first failing capture size of class C4 in a check's report JSON; nullopt when none fails.
std::optional<int64_t> c4_capture_size(const std::string& flags, const fs::path& dir) {
  const auto out = dir / "r.json";
  fs::remove(out);
  const auto r = run_cli("check " + laguna + " --backend triton --max-model-len 128 --cudagraph-mode full" +
                         " --mutant dummy-seq-lens-unclamped --json " + out.string() + " " + flags);
  EXPECT_TRUE(r.code == 0 || r.code == 1) << flags << ": " << r.err;
  if (r.code != 1) return std::nullopt;
  std::optional<int64_t> first;
  const json report = json::parse(slurp(out));
  for (const auto& t : report["thresholds"])
    if (t.value("class", "") == "C4" && t.value("variable", "") == "capture_size")
      first = std::min(first.value_or(INT64_MAX), t["min_failing"].get<int64_t>());
  return first;
}

// C4 on Laguna XS.2 (Triton, FULL graphs, the unclamped dummy seq_len): max_model_len 128 and
// block 16 give a row of cdiv(128, 16) = 8 blocks (already a multiple of 128 / 16 = 8), 128
// tokens, so the first capture size above 128 fails. The capture list decides which that is:
//   max_num_seqs 68: ceiling min(2 x 68, 512) = 136, list 1, 2, 4, 8, .., 128, 136 -> 136
//   + max_num_batched_tokens 130: ceiling min(136, 130) = 130, and 130 itself is added -> 130
//   + capture sizes 1,2,4,8,128, or the ceiling 128: nothing above 128 -> clean
//   + capture sizes 1,2,4,8,128,129 -> 129
//   block 256, max_num_seqs 256: a row is cdiv(128, 256) = 1 block (128 / gcd(128, 256) = 1) of
//   256 tokens; the list goes 256, 272, ..., 512 -> 272
TEST(EngineSettings, SettingsChangeTheVerdictAsComputedByHand) {
  const auto dir = scratch("engine_verdict");
  EXPECT_EQ(c4_capture_size("--max-num-seqs 68", dir), 136);
  EXPECT_EQ(c4_capture_size("--max-num-seqs 68 --max-num-batched-tokens 130", dir), 130);
  EXPECT_EQ(c4_capture_size("--max-num-seqs 68 --cudagraph-capture-sizes 1,2,4,8,128", dir), std::nullopt);
  EXPECT_EQ(c4_capture_size("--max-num-seqs 68 --max-cudagraph-capture-size 128", dir), std::nullopt);
  EXPECT_EQ(c4_capture_size("--max-num-seqs 68 --cudagraph-capture-sizes 1,2,4,8,128,129", dir), 129);
  EXPECT_EQ(c4_capture_size("--block-size 256", dir), 272);
  // The same settings from a file of vLLM's engine arguments, and a flag overriding the file.
  std::ofstream(dir / "args.json") << R"({"max_num_seqs": 68, "max_num_batched_tokens": 130,
    "model": "poolside/Laguna-XS.2", "compilation_config": {"cudagraph_mode": "FULL", "mode": 3}})";
  EXPECT_EQ(c4_capture_size("--engine-args " + (dir / "args.json").string(), dir), 130);
  EXPECT_EQ(c4_capture_size(
                "--engine-args " + (dir / "args.json").string() + " --max-num-batched-tokens 8192", dir),
            136);
}

TEST(EngineSettings, EngineArgsFileReachesThePlan) {
  const auto dir = scratch("engine_plan");
  std::ofstream(dir / "args.json") << R"({"block_size": 32, "dtype": "float16", "tensor_parallel_size": 2,
    "speculative_config": {"method": "eagle", "num_speculative_tokens": 2}, "enforce_eager": true})";
  const auto out = dir / "plan.json";
  const auto r = run_cli("plan " + laguna + " --engine-args " + (dir / "args.json").string() + " --json " +
                         out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const json p = json::parse(slurp(out));
  EXPECT_EQ(p["kv_cache"]["block_size"], 32);
  EXPECT_EQ(p["model"]["dtype"], "float16");
  EXPECT_EQ(p["ranks"][0]["tp"], 2);
  EXPECT_EQ(p["engine"]["num_speculative_tokens"], 2);
  EXPECT_EQ(p["engine"]["cudagraph_mode"], "none");
}

// The buffers of one attention group in `plan CONFIG --json` with `flags`: name -> shape.
std::map<std::string, json> group_buffers(const std::string& flags, const fs::path& dir) {
  const auto out = dir / "plan.json";
  const auto r = run_cli("plan " + laguna + " --max-num-seqs 20 --json " + out.string() + " " + flags);
  EXPECT_EQ(r.code, 0) << flags << ": " << r.err;
  const json plan = json::parse(slurp(out));
  std::map<std::string, json> shapes;
  for (const auto& b : plan["ranks"][0]["groups"][0]["buffers"])
    shapes[b["name"].get<std::string>()] = b["shape"];
  return shapes;
}

// --engine-flavour on plan (max_num_seqs 20, k 0, FULL_AND_PIECEWISE: vLLM's ceiling min(2 x 20,
// 512) = 40, list 1, 2, 4, 8, 16, 24, 32, 40):
//   FA3 scheduler_metadata, 1 + 4 x round_up(max(max_num_seqs, largest capture), 4): vLLM and
//   vllm-ascend 1 + 4 x 40 = 161; SGLang drops the sizes above its pool of 20 and captures 20
//   itself, so 1 + 4 x 20 = 81.
//   FlashInfer paged_kv_indptr / last_page_len: vLLM and SGLang 20 requests (21, 20 entries);
//   vllm-ascend max(20, 40) + 1 dummy = 41 requests (42, 41).
TEST(EngineSettings, EngineFlavourReachesThePlan) {
  const auto dir = scratch("engine_flavour");
  const std::pair<std::string, std::pair<int, int>> flavours[] = {
      {"", {161, 21}}, {"vllm", {161, 21}}, {"sglang", {81, 21}}, {"vllm-ascend", {161, 42}}};
  for (const auto& [f, sizes] : flavours) {
    const std::string flag = f.empty() ? "" : "--engine-flavour " + f;
    EXPECT_EQ(group_buffers("--backend fa3 " + flag, dir)["scheduler_metadata"], json::array({sizes.first}))
        << f;
    auto fi = group_buffers("--backend flashinfer " + flag, dir);
    EXPECT_EQ(fi["paged_kv_indptr"], json::array({sizes.second})) << f;
    EXPECT_EQ(fi["paged_kv_last_page_len"], json::array({sizes.second - 1})) << f;
  }
  // vllm-ascend #16168 (the mutant) fails only under its own flavour.
  const std::string c5 =
      "check " + laguna + " --backend flashinfer --max-num-seqs 20 --mutant request-meta-max-num-seqs";
  EXPECT_EQ(run_cli(c5 + " --engine-flavour vllm-ascend").code, 1);
  EXPECT_EQ(run_cli(c5).code, 0);
}

// The SGLang flavour's engine settings in `plan --json` with `flags` (no --max-num-seqs of
// group_buffers: --max-running-requests gives it).
json sglang_engine(const std::string& flags, const fs::path& dir) {
  const auto out = dir / "plan.json";
  const auto r = run_cli("plan " + laguna + " --backend flashinfer --engine-flavour sglang --json " +
                         out.string() + " " + flags);
  EXPECT_EQ(r.code, 0) << flags << ": " << r.err;
  return json::parse(slurp(out))["engine"];
}

std::map<std::string, json> sglang_buffers(const std::string& flags, const fs::path& dir) {
  const auto out = dir / "plan.json";
  const auto r = run_cli("plan " + laguna + " --engine-flavour sglang --json " + out.string() + " " + flags);
  EXPECT_EQ(r.code, 0) << flags << ": " << r.err;
  const json plan = json::parse(slurp(out));
  std::map<std::string, json> shapes;
  for (const auto& b : plan["ranks"][0]["groups"][0]["buffers"])
    shapes[b["name"].get<std::string>()] = b["shape"];
  return shapes;
}

// SGLang's settings on plan, by hand from core/backends/request_meta.cpp and SGLang's
// FlashInferAttnBackend: FlashInfer's rows are max(graph ceiling, eager ceiling), the graph
// ceiling round_up(pool, m) with m the attention TP size under require_gathered_buffer (else 1,
// _cuda_graph_capture_max_bs), the eager ceiling round_up(pool, attention TP) always
// (get_eager_max_batch_size); paged_kv_indptr holds rows + 1, paged_kv_last_page_len rows. FA3's
// scheduler_metadata is 1 + 4 x round_up(max(max_num_seqs, largest capture), 4), SGLang's capture
// list vLLM's cut at round_up(pool, m) requests, that size added when the list went past it.
//   --max-running-requests 20 (max_num_seqs 20; vLLM's list up to min(2 x 20, 512) = 40: 1, 2, 4,
//   8, 16, 24, 32, 40):
//     attention TP 1: rows max(20, 20) = 20 (21, 20); list cut at 20: ..., 16, 20 -> 1 + 4 x 20 = 81
//     attention TP 8, gathered: rows max(24, 24) = 24 (25, 24); cut at 24: ..., 16, 24 -> 97
//     attention TP 8, not gathered: rows max(20, 24) = 24 (25, 24); cut at 20 -> 81
//   --max-num-seqs 5 --max-running-requests 21 --attn-tp-size 4, gathered (a DP-attention rank:
//   the pool is max_running_requests, a step at most max_running_requests / dp_size): rows
//   max(round_up(21, 4), round_up(21, 4)) = 24 (25, 24); the same without the pool (pool =
//   max_num_seqs 5): max(8, 8) = 8 (9, 8). vLLM's list up to min(2 x 5, 512) = 10 is 1, 2, 4, 8,
//   within either cut: 1 + 4 x round_up(max(5, 8), 4) = 33.
//   SGLang's own test (pool 65, attention TP 4, gathered): rows 68 (69, 68).
//   Two-batch overlap (alignment 2), --max-num-seqs 5 --max-running-requests 21: graph ceiling 22,
//   eager 21 (no MLP sync): rows 22 (23); the same with the gather at attention TP 4: 2 x 4 = 8,
//   graph 24, eager 24: rows 24 (25). Attention CP 5 at attention TP 8 (DP attention), pool 20:
//   alignment 1 -> 5, graph 20; eager ceil_align(ceil_align(20, 8), 5) = 25: rows 25 (26). Under
//   --cp-strategy zigzag the eager CP padding is 2 x 5: ceil_align(24, 10) = 30, rows 30 (31); the
//   graph alignment stays 5.
TEST(EngineSettings, SglangSettingsReachThePlan) {
  const auto dir = scratch("engine_sglang");
  const json e = sglang_engine("--max-running-requests 20 --attn-tp-size 8 --gathered-buffer true", dir);
  EXPECT_EQ(e["req_pool_size"], 20);
  EXPECT_EQ(e["max_num_seqs"], 20);  // the pool's requests, --max-num-seqs not given
  EXPECT_EQ(e["attn_tp_size"], 8);
  EXPECT_EQ(e["gathered_buffer"], true);
  EXPECT_EQ(e["two_batch_overlap"], false);
  EXPECT_EQ(e["attn_cp_size"], 1);
  const json tbo = sglang_engine("--two-batch-overlap true --attn-cp-size 3", dir);
  EXPECT_EQ(tbo["two_batch_overlap"], true);
  EXPECT_EQ(tbo["attn_cp_size"], 3);
  EXPECT_EQ(tbo["cp_zigzag"], false);
  EXPECT_EQ(sglang_engine("--attn-cp-size 3 --cp-strategy zigzag", dir)["cp_zigzag"], true);
  EXPECT_EQ(sglang_engine("--max-num-seqs 5 --max-running-requests 21", dir)["max_num_seqs"], 5);
  EXPECT_EQ(sglang_engine("", dir)["req_pool_size"], 0);  // 0: the pool is max_num_seqs
  const std::tuple<std::string, int, int> rows[] = {
      {"--max-running-requests 20", 21, 81},
      {"--max-running-requests 20 --attn-tp-size 8 --gathered-buffer true", 25, 97},
      {"--max-running-requests 20 --attn-tp-size 8", 25, 81},
      {"--max-running-requests 20 --attn-tp-size 8 --gathered-buffer false", 25, 81},
      {"--max-num-seqs 5 --max-running-requests 21 --attn-tp-size 4 --gathered-buffer true", 25, 33},
      {"--max-num-seqs 5 --attn-tp-size 4 --gathered-buffer true", 9, 33},
      {"--max-running-requests 65 --attn-tp-size 4 --gathered-buffer true", 69, -1},
      {"--max-num-seqs 5 --max-running-requests 21 --two-batch-overlap true", 23, -1},
      {"--max-num-seqs 5 --max-running-requests 21 --two-batch-overlap true --attn-tp-size 4 "
       "--gathered-buffer true",
       25, -1},
      {"--max-running-requests 20 --attn-tp-size 8 --attn-cp-size 5", 26, -1},
      {"--max-running-requests 20 --attn-tp-size 8 --attn-cp-size 5 --cp-strategy interleave", 26, -1},
      {"--max-running-requests 20 --attn-tp-size 8 --attn-cp-size 5 --cp-strategy zigzag", 31, -1},
  };
  for (const auto& [flags, indptr, metadata] : rows) {
    auto fi = sglang_buffers("--backend flashinfer " + flags, dir);
    EXPECT_EQ(fi["paged_kv_indptr"], json::array({indptr})) << flags;
    EXPECT_EQ(fi["paged_kv_last_page_len"], json::array({indptr - 1})) << flags;
    if (metadata > 0) {
      EXPECT_EQ(sglang_buffers("--backend fa3 " + flags, dir)["scheduler_metadata"], json::array({metadata}))
          << flags;
    }
  }
  // The same settings from a file (SGLang's max_running_requests, the mirror's attn_tp_size and
  // gathered_buffer), a flag overriding it: attention TP 1 makes both ceilings the pool, 21 (22).
  std::ofstream(dir / "args.json") << R"({"max_num_seqs": 5, "max_running_requests": 21, "attn_tp_size": 4,
    "gathered_buffer": true})";
  const std::string args = "--backend flashinfer --engine-args " + (dir / "args.json").string();
  EXPECT_EQ(sglang_buffers(args, dir)["paged_kv_indptr"], json::array({25}));
  EXPECT_EQ(sglang_buffers(args + " --attn-tp-size 1", dir)["paged_kv_indptr"], json::array({22}));
  std::ofstream(dir / "bad.json") << R"({"max_running_requests": 5000})";
  expect_one_line(
      run_cli("plan " + laguna + " --engine-flavour sglang --engine-args " + (dir / "bad.json").string()),
      {"bad.json: field 'max_running_requests' = 5000: must be in 1..4096"});
}

// The two historical SGLang sizings (docs/catalogue.md C5) against these settings, on FlashInfer:
//   request-meta-graph-ceiling (rows from the graph ceiling only, before #40668): pool 20,
//   attention TP 8 without the gathered buffer: 20 rows (84 B of indptr) while an eager step of 20
//   requests pads to 24 (100 B); with it the graph ceiling is 24 too: clean.
//   request-meta-from-pool (#25124: rows from the pool): pool 20, attention TP 8, gathered: a step
//   of 17 requests is the first to pad past 20 (to 24); at attention TP 1 nothing pads: clean. A
//   DP-attention rank of 5 requests (attention TP 4, gathered) pads to 8: past a pool of 5 from
//   max_num_seqs, within SGLang's pool of 21.
TEST(EngineSettings, SglangSettingsChangeTheVerdictAsComputedByHand) {
  const std::string c5 = "check " + laguna + " --backend flashinfer --engine-flavour sglang ";
  auto r = run_cli(c5 + "--max-running-requests 20 --attn-tp-size 8 --mutant request-meta-graph-ceiling");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("paged_kv_indptr: capacity 84 B, required 100 B"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli(c5 + "--max-running-requests 20 --attn-tp-size 8 --gathered-buffer true --mutant "
                         "request-meta-graph-ceiling")
                .code,
            0);
  r = run_cli(c5 +
              "--max-running-requests 20 --attn-tp-size 8 --gathered-buffer true --mutant "
              "request-meta-from-pool");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("paged_kv_indptr holds 84 bytes but the step needs 100 bytes at batch size 17"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run_cli(c5 + "--max-running-requests 20 --mutant request-meta-from-pool").code, 0);
  const std::string rank =
      "--max-num-seqs 5 --attn-tp-size 4 --gathered-buffer true --mutant request-meta-from-pool";
  r = run_cli(c5 + rank);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("paged_kv_indptr: capacity 24 B, required 36 B"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli(c5 + rank + " --max-running-requests 21").code, 0);
  // The fixed code is clean under every one of them.
  EXPECT_EQ(run_cli(c5 + "--max-running-requests 20 --attn-tp-size 8 --gathered-buffer true").code, 0);
}

TEST(EngineSettings, EngineArgsFileErrorsNameTheFileAndTheKey) {
  const auto dir = scratch("engine_args");
  const std::pair<std::string, std::vector<std::string>> files[] = {
      {R"({"max_num_seqs": 128, "swap_space": 4})", {"'swap_space'", "not an engine argument"}},
      {R"({"block_size": "16"})", {"'block_size'", "expected an integer"}},
      {R"({"max_num_seqs": 5000})", {"'max_num_seqs' = 5000", "1..4096"}},
      {R"({"compilation_config": {"cudagraph_capture_sizes": [1, 8, 4]}})",
       {"'compilation_config.cudagraph_capture_sizes'", "strictly ascending"}},
      {R"({"compilation_config": {"cudagraph_capture_sizes": [1, 2, "4"]}})",
       {"'compilation_config.cudagraph_capture_sizes[2]'", "expected an integer"}},
      {R"({"cudagraph_capture_sizes": [1, 2, 4], "max_cudagraph_capture_size": 512})",
       {"'max_cudagraph_capture_size' = 512", "largest"}},
      {R"({"cudagraph_capture_sizes": [1], "compilation_config": {"cudagraph_capture_sizes": [1]}})",
       {"'cudagraph_capture_sizes'", "compilation_config"}},
      {R"({"speculative_config": {"method": "ngram", "num_speculative_tokens": 3}})",
       {"'speculative_config.method'", "ngram", "EAGLE"}},
      {R"({"speculative_config": {"method": "eagle"}})", {"'speculative_config.num_speculative_tokens'"}},
      {R"({"kv_cache_dtype": "fp8_ds_mla"})", {"'kv_cache_dtype' = fp8_ds_mla", "not modelled"}},
      {R"({"tensor_parallel_size": 3})", {"laguna-xs2.json", "tp 3"}},  // the config refuses it
      {R"({"enforce_eager": 1})", {"'enforce_eager'", "true or false"}},
      // vLLM's AttentionConfig: use_trtllm_attention only
      {R"({"attention_config": {"use_trtllm_attention": 0}})",
       {"'attention_config.use_trtllm_attention' = 0", "true or false"}},
      {R"({"attention_config": {"flash_attn_version": 3}})",
       {"'attention_config.flash_attn_version' = 3", "not an engine argument"}},
      {R"({"engine_flavour": "sglang"})", {"'engine_flavour'", "not an engine argument"}},
      // SGLang's settings need the sglang flavour, which only the command line gives; SGLang's DP
      // attention arguments are not read, the attention TP size they make is.
      {R"({"max_running_requests": 20})", {"'max_running_requests' = 20", "needs engine flavour sglang"}},
      {R"({"attn_tp_size": 4})", {"'attn_tp_size' = 4", "needs engine flavour sglang"}},
      {R"({"gathered_buffer": 1})", {"'gathered_buffer' = 1", "expected true or false"}},
      {R"({"enable_two_batch_overlap": true})",
       {"'enable_two_batch_overlap' = true", "needs engine flavour sglang"}},
      {R"({"attn_cp_size": 3})", {"'attn_cp_size' = 3", "needs engine flavour sglang"}},
      {R"({"enable_dp_attention": true, "dp_size": 4})", {"'enable_dp_attention' = true", "attn_tp_size"}},
      {R"({"dp_size": 4})", {"'dp_size' = 4", "not modelled", "attn_tp_size"}},
      {R"([128])", {"'<engine args>'"}},
      {R"({"max_num_seqs": 128,)", {"'<json>'", "malformed JSON"}},
  };
  int n = 0;
  for (const auto& [text, pieces] : files) {
    const auto file = dir / ("args" + std::to_string(n++) + ".json");
    std::ofstream(file) << text;
    const auto out = dir / "out.json";
    const auto r = run_cli("check " + laguna + " --engine-args " + file.string() + " --json " + out.string());
    std::vector<std::string> all = pieces;
    if (pieces.front() != "laguna-xs2.json") all.push_back(file.filename().string() + ": field");
    EXPECT_EQ(r.code, 2) << text;
    EXPECT_EQ(r.err_lines(), 1) << text << ": " << r.err;
    for (const auto& p : all) EXPECT_NE(r.err.find(p), std::string::npos) << p << " in " << r.err;
    EXPECT_FALSE(fs::exists(out)) << text;
  }
  expect_one_line(run_cli("check " + laguna + " --engine-args " + dir.string()), {"directory"});
  // --json never writes over the engine arguments it read.
  const auto args = dir / "ok.json";
  std::ofstream(args) << R"({"max_num_seqs": 8})";
  expect_one_line(run_cli("check " + laguna + " --engine-args " + args.string() + " --json " + args.string()),
                  {"'--json'", "input file"});
}

// vLLM #53658 (TRITON_ATTN, FULL graphs, max_model_len 4096, block 16, a capture size of 4128):
// the warm-up of 4128 tokens has min(4128, 256) = 256 requests, each with seq_len 4128 =
// cdiv(4128, 16) = 258 blocks, 1032 B, against rows of 256 blocks, 1024 B; the last row's reads
// leave the table. vLLM 0.23 is the mutant; the mirror's fixed code (#53671) is clean.
TEST(EngineSettings, UpstreamDummySeqLensFailureFromItsSettings) {
  const std::string line = "check " + source_path("configs/gemma4-31b.json") +
                           " --backend triton --cudagraph-mode FULL --max-model-len 4096"
                           " --cudagraph-capture-sizes 4096,4128";
  auto r = run_cli(line + " --mutant dummy-seq-lens-unclamped");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(
      r.out.find("VIOLATION buffer_capacity [C4]: triton tp 1 group 0 (10 layers) block_table: capacity "
                 "1024 B, required 1032 B"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("seq_len 4128 = 258 blocks of 16, a block-table row holds 256"), std::string::npos);
  EXPECT_NE(r.out.find("verdict: FAIL (6 violations)"), std::string::npos);
  r = run_cli(line);
  EXPECT_EQ(r.code, 0) << r.out;
}

}  // namespace
