// The engine settings on the command line and from --engine-args (cli/engine_flags.hpp): a bad
// value is exit 2 with one line naming the flag (or the file and key) and the value; a setting
// changes the verdict as the formulas say it must (values computed by hand below); and vLLM
// #53658 reproduced from its reported settings in one command line.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <string>

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
      {"--kv-cache-dtype fp8_e4m3", {"'--kv-cache-dtype' = fp8_e4m3", "not modelled"}},
      {"--kv-cache-dtype int8", {"'--kv-cache-dtype' = \"int8\"", "unsupported dtype"}},
      {"--dtype double", {"'--dtype' = \"double\"", "unsupported dtype"}},
      {"--num-speculative-tokens 17", {"'--num-speculative-tokens' = 17", "0..16"}},
      {"--spec-tokens 1 --num-speculative-tokens 1", {"'--spec-tokens' = 1", "--num-speculative-tokens"}},
      {"--cudagraph-mode FULLY", {"'--cudagraph-mode' = \"FULLY\"", "full_and_piecewise"}},
      {"--no-hybrid=yes", {"'--no-hybrid' = yes", "takes no value"}},
      {"--engine-flavour vllm_ascend",
       {"'--engine-flavour' = \"vllm_ascend\"", "expected vllm, sglang or vllm-ascend"}},
      {"--engine-flavour", {"'--engine-flavour' = (missing)", "takes a value"}},
  };
  for (const auto& [flags, pieces] : cases) {
    const auto r = run_cli("check " + laguna + " " + flags);
    EXPECT_EQ(r.code, 2) << flags;
    EXPECT_EQ(r.err_lines(), 1) << flags << ": " << r.err;
    for (const auto& p : pieces) EXPECT_NE(r.err.find(p), std::string::npos) << p << " in " << r.err;
  }
  // The old and the new name of the speculative tokens, and vLLM's upper-case mode names, run.
  for (const char* ok :
       {"--spec-tokens 1", "--num-speculative-tokens 1", "--cudagraph-mode FULL_AND_PIECEWISE"})
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
      {R"({"kv_cache_dtype": "fp8"})", {"'kv_cache_dtype' = fp8", "not modelled"}},
      {R"({"tensor_parallel_size": 3})", {"laguna-xs2.json", "tp 3"}},  // the config refuses it
      {R"({"enforce_eager": 1})", {"'enforce_eager'", "true or false"}},
      {R"({"engine_flavour": "sglang"})", {"'engine_flavour'", "not an engine argument"}},
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
