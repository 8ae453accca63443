// fuzz's engine settings pin every case (cli/engine_flags.hpp, generators/pinned.hpp). A campaign's
// options are read from its command line by the command's own parser (read_fuzz_options), and
// every index of the campaign is sampled as its jobs sample them (sample_case): each case must
// have the setting as the flag or the file wrote it (the values below), and without the flag the
// same campaign must draw other values, so that the check can tell a pin from a default.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/fuzz_campaign.hpp"
#include "generators/case_gen.hpp"
#include "tests/cli/cli_run.hpp"

namespace {

using namespace headroom;
using headroom_test::fs::path;

constexpr uint64_t campaign_cases = 400;

// The options `headroom fuzz --seed 7 FLAGS` runs with.
cli::fuzz_options options_of(const std::string& flags) {
  std::vector<std::string> words = {"headroom", "fuzz", "--seed", "7", "--cases", "400"};
  std::istringstream in(flags);
  for (std::string w; in >> w;) words.push_back(w);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return cli::read_fuzz_options(static_cast<int>(argv.size()), argv.data());
}

// How many of the campaign's cases have the property.
uint64_t cases_with(const std::string& flags, const std::function<bool(const check_case&)>& has) {
  const cli::fuzz_options o = options_of(flags);
  uint64_t n = 0;
  for (uint64_t i = 0; i < campaign_cases; ++i) n += has(generators::sample_case(o.profile, o.seed, i));
  return n;
}

struct pin_case {
  std::string flags;
  std::function<bool(const check_case&)> has;
};

std::vector<pin_case> pin_cases() {
  return {
      {"--block-size 32",
       [](const check_case& c) { return c.block_size == 32 && c.flashinfer.page_size == 32; }},
      {"--max-num-seqs 8", [](const check_case& c) { return c.engine.max_num_seqs == 8; }},
      {"--max-model-len 512", [](const check_case& c) { return c.engine.max_model_len == 512; }},
      // the drawn max_num_seqs stay within the tokens (2, 4, 6, 8, 16, 32 of the draws' list)
      {"--max-num-batched-tokens 40",
       [](const check_case& c) {
         return c.engine.max_num_batched_tokens == 40 && c.engine.max_num_seqs <= 40;
       }},
      {"--kv-cache-dtype float32", [](const check_case& c) { return c.model.kv_dtype == dtype::fp32; }},
      {"--dtype float16", [](const check_case& c) { return c.model.kv_dtype == dtype::fp16; }},
      {"--dtype float16 --kv-cache-dtype float32",  // the cache's wins, as on check
       [](const check_case& c) { return c.model.kv_dtype == dtype::fp32; }},
      {"--num-speculative-tokens 3",
       [](const check_case& c) { return c.engine.num_speculative_tokens == 3; }},
      {"--spec-tokens 1", [](const check_case& c) { return c.engine.num_speculative_tokens == 1; }},
      {"--cudagraph-mode FULL_DECODE_ONLY",
       [](const check_case& c) { return c.engine.cg_mode == cudagraph_mode::full_decode_only; }},
      {"--cudagraph-capture-sizes 1,2,4,8",
       [](const check_case& c) {
         return c.engine.capture_sizes == std::vector<int64_t>{1, 2, 4, 8};
       }},
      // a ceiling alone: vLLM's default list up to it, no drawn list
      {"--max-cudagraph-capture-size 64",
       [](const check_case& c) { return c.engine.max_capture_size == 64 && c.engine.capture_sizes.empty(); }},
  };
}

TEST(FuzzPins, EveryCaseOfTheCampaignHasThePinnedSetting) {
  for (const char* target : {"sim", "model"})  // model: also the cases near 2^31 token offsets
    for (const auto& p : pin_cases()) {
      const std::string flags = std::string("--target ") + target + " " + p.flags;
      EXPECT_EQ(cases_with(flags, p.has), campaign_cases) << flags;
      EXPECT_LT(cases_with(std::string("--target ") + target, p.has), campaign_cases)
          << p.flags << ": the unpinned campaign never draws anything else, the check proves nothing";
    }
}

TEST(FuzzPins, EngineArgsFilePinsEveryCaseAndFlagsOverrideIt) {
  const path dir = headroom_test::scratch("fuzz_pins_args");
  const path file = dir / "args.json";
  std::ofstream(file) << R"({"model": "poolside/Laguna-XS.2", "seed": 3, "block_size": 32,
    "max_num_seqs": 8, "max_model_len": 1024, "kv_cache_dtype": "float16",
    "speculative_config": {"method": "eagle3", "num_speculative_tokens": 2},
    "compilation_config": {"cudagraph_mode": "FULL", "cudagraph_capture_sizes": [1, 2, 4, 8, 16]}})";
  const std::string args = "--engine-args " + file.string();
  const auto from_file = [](int64_t block) {
    return [block](const check_case& c) {
      const engine_settings& e = c.engine;
      return c.block_size == block && c.flashinfer.page_size == block && e.max_num_seqs == 8 &&
             e.max_model_len == 1024 && c.model.kv_dtype == dtype::fp16 && e.num_speculative_tokens == 2 &&
             e.cg_mode == cudagraph_mode::full && e.capture_sizes == std::vector<int64_t>{1, 2, 4, 8, 16};
    };
  };
  EXPECT_EQ(cases_with(args, from_file(32)), campaign_cases);
  EXPECT_EQ(cases_with(args + " --block-size 16", from_file(16)), campaign_cases);
  EXPECT_EQ(cases_with("", from_file(32)), 0u);
}

}  // namespace
