// fuzz's engine settings through the headroom command: the counterexamples a pinned campaign
// writes keep the pinned settings through shrinking (read back from the files), the summary and
// the repro lines say them, and a bad value is exit 2 with the very line check prints for it.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.hpp"

namespace {

using namespace headroom_test;
using nlohmann::json;

const std::string pins =
    "--block-size 32 --max-num-seqs 8 --kv-cache-dtype float32 --num-speculative-tokens 2";

// C1's campaign on the formulas (model-wide heads): counterexamples within 60 cases.
const std::string campaign = "fuzz --seed 1 --cases 60 --target model --policy model-wide ";

TEST(FuzzPinsCli, CounterexamplesKeepThePinnedSettings) {
  const fs::path dir = scratch("fuzz_pins_out");
  const auto r = run_cli(campaign + pins + " --out " + dir.string());
  ASSERT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("every case pinned to --max-num-seqs 8 --block-size 32 --kv-cache-dtype float32 "
                       "--num-speculative-tokens 2\n"),
            std::string::npos)
      << r.out;
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const json c = json::parse(slurp(e.path()));
    ++files;
    EXPECT_EQ(c["block_size"], 32) << e.path();
    EXPECT_EQ(c["flashinfer"]["page_size"], 32) << e.path();
    EXPECT_EQ(c["engine"]["max_num_seqs"], 8) << e.path();
    EXPECT_EQ(c["engine"]["num_speculative_tokens"], 2) << e.path();
    EXPECT_EQ(c["model"]["dtype"], "float32") << e.path();
  }
  EXPECT_GE(files, 2);
  // Without --out the repro line repeats the campaign with the same pins.
  const auto again = run_cli(campaign + pins);
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.out.find("--policy model-wide --grouping heads --backend all " +
                           std::string("--max-num-seqs 8 --block-size 32 --kv-cache-dtype float32 "
                                       "--num-speculative-tokens 2\n")),
            std::string::npos)
      << again.out;
}

TEST(FuzzPinsCli, BadValuesAreTheLineCheckPrints) {
  const std::string laguna = source_path("configs/laguna-xs2.json");
  const std::vector<std::string> bad = {
      "--block-size 0",
      "--block-size 65537",
      "--max-num-seqs 0",
      "--max-model-len 0",
      "--max-num-batched-tokens 0",
      "--max-num-seqs 64 --max-num-batched-tokens 32",
      "--kv-cache-dtype fp8",
      "--dtype double",
      "--num-speculative-tokens 17",
      "--spec-tokens 1 --num-speculative-tokens 1",
      "--cudagraph-mode FULLY",
      "--cudagraph-capture-sizes 1,4,2",
      "--cudagraph-capture-sizes 1,2,4 --max-cudagraph-capture-size 8",
      "--max-cudagraph-capture-size 0",
  };
  for (const auto& flags : bad) {
    const auto fuzz = run_cli("fuzz --cases 1 " + flags);
    const auto check = run_cli("check " + laguna + " " + flags);
    EXPECT_EQ(fuzz.code, 2) << flags;
    EXPECT_EQ(fuzz.out, "") << flags;
    EXPECT_EQ(fuzz.err_lines(), 1) << flags << ": " << fuzz.err;
    EXPECT_EQ(fuzz.err, check.err) << flags;
  }
  EXPECT_NE(run_cli("fuzz --cases 1 --block-size 0").err.find("'--block-size' = 0: must be in 1..65536"),
            std::string::npos);
}

TEST(FuzzPinsCli, EngineArgsErrorsNameTheFileAndTheKey) {
  const fs::path dir = scratch("fuzz_pins_args_bad");
  const std::pair<std::string, std::vector<std::string>> files[] = {
      {R"({"block_size": 0})", {"field 'block_size' = 0: must be in 1..65536"}},
      {R"({"speculative_config": {"method": "ngram", "num_speculative_tokens": 3}})",
       {"field 'speculative_config.method' = \"ngram\"", "EAGLE"}},
      {R"({"swap_space": 4})", {"field 'swap_space' = 4", "not an engine argument"}},
      // Settings check takes and fuzz's cases draw.
      {R"({"tensor_parallel_size": 2})",
       {"field 'tensor_parallel_size' = 2: headroom fuzz does not take this setting (--tp)"}},
      {R"({"mamba_block_size": 64})", {"field 'mamba_block_size' = 64", "(--mamba-block-size)"}},
  };
  int n = 0;
  for (const auto& [text, pieces] : files) {
    const fs::path file = dir / ("args" + std::to_string(n++) + ".json");
    std::ofstream(file) << text;
    const auto r = run_cli("fuzz --cases 1 --engine-args " + file.string());
    EXPECT_EQ(r.code, 2) << text;
    EXPECT_EQ(r.out, "") << text;
    EXPECT_EQ(r.err_lines(), 1) << text << ": " << r.err;
    EXPECT_NE(r.err.find(file.string() + ": "), std::string::npos) << r.err;
    for (const auto& p : pieces) EXPECT_NE(r.err.find(p), std::string::npos) << p << " in " << r.err;
  }
}

}  // namespace
