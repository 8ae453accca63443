// fuzz's engine settings pin every case (cli/engine_flags.hpp, generators/pinned.hpp). A campaign's
// options are read from its command line by the command's own parser (read_fuzz_options), and
// every index of the campaign is sampled as its jobs sample them (sample_case): each case must
// have the setting as the flag or the file wrote it (the values below), and without the flag the
// same campaign must draw other values, so that the check can tell a pin from a default.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "cli/fuzz_campaign.hpp"
#include "generators/case_gen.hpp"
#include "generators/shrink.hpp"
#include "tests/cli/cli_run.hpp"
#include "tests/cli/fuzz_options.hpp"

namespace {

using namespace headroom;
using headroom_test::fs::path;

constexpr uint64_t campaign_cases = 400;

cli::fuzz_options options_of(const std::string& flags) { return headroom_test::fuzz_options_of(flags); }

// How many of the campaign's cases have the property.
uint64_t cases_with(const std::string& flags, const std::function<bool(const check_case&)>& has) {
  const cli::fuzz_options o = options_of(flags);
  uint64_t n = 0;
  for (uint64_t i = 0; i < campaign_cases; ++i) n += has(generators::sample_case(o.profile, o.seed, i));
  return n;
}

// The same for the cases the campaign's jobs run (cli::sample_fuzz_case: SGLang's pins too).
uint64_t fuzz_cases_with(const std::string& flags, const std::function<bool(const check_case&)>& has) {
  const cli::fuzz_options o = options_of(flags);
  uint64_t n = 0;
  for (uint64_t i = 0; i < campaign_cases; ++i) n += has(cli::sample_fuzz_case(o, i));
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
      // one TP size the generators never draw by themselves, and a list to draw from
      {"--tp 3", [](const check_case& c) { return c.tp == 3; }},
      {"--tp 2,16", [](const check_case& c) { return c.tp == 2 || c.tp == 16; }},
      {"--engine-flavour sglang",
       [](const check_case& c) { return c.engine.flavour == engine_flavour::sglang; }},
      {"--engine-flavour vllm-ascend",
       [](const check_case& c) { return c.engine.flavour == engine_flavour::vllm_ascend; }},
      {"--head-tile 24", [](const check_case& c) { return c.engine.head_tile == 24; }},
      {"--mamba-block-size 96", [](const check_case& c) { return c.engine.mamba_block_size == 96; }},
      {"--extra-group-block-size 12",
       [](const check_case& c) { return c.engine.extra_group_block_size == 12; }},
      {"--flashinfer-decode tensor-cores",
       [](const check_case& c) { return c.flashinfer.tensor_core_decode; }},
      {"--flashinfer-decode cuda-cores",
       [](const check_case& c) { return !c.flashinfer.tensor_core_decode; }},
      {"--batch-invariant false", [](const check_case& c) { return !c.flashinfer.disable_split_kv; }},
      // never drawn (the sim and gpu targets run FA2 bodies); fuzz_main refuses it off --target model
      {"--flashinfer-prefill fa3", [](const check_case& c) { return c.flashinfer.prefill_sm90; }},
      {"--flashinfer-prefill auto",
       [](const check_case& c) { return c.flashinfer.prefill_auto && !c.flashinfer.prefill_sm90; }},
      // vLLM's batch-invariant mode decodes on tensor cores: the pin is both
      {"--batch-invariant true",
       [](const check_case& c) { return c.flashinfer.disable_split_kv && c.flashinfer.tensor_core_decode; }},
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

// --tp is a list the cases draw from: each size of it is drawn, and nothing else.
TEST(FuzzPins, TpListIsDrawnFrom) {
  for (const char* target : {"sim", "model"}) {
    const std::string flags = std::string("--target ") + target + " --tp 2,16";
    const uint64_t two = cases_with(flags, [](const check_case& c) { return c.tp == 2; });
    const uint64_t sixteen = cases_with(flags, [](const check_case& c) { return c.tp == 16; });
    EXPECT_EQ(two + sixteen, campaign_cases) << target;
    EXPECT_GT(two, 0u) << target;
    EXPECT_GT(sixteen, 0u) << target;
  }
}

// SGLang's attention TP and gathered buffer come with a pinned SGLang flavour, as with a drawn one:
// the attention TP is drawn from 1, 2, 4 and 8 alike, so about 3 cases in 4 have one above 1 (300
// of 400; more than half is asked). Under another flavour none has.
TEST(FuzzPins, PinnedSglangDrawsItsAttentionTp) {
  const auto attn_tp = [](const check_case& c) { return c.engine.attn_tp_size > 1; };
  EXPECT_GT(cases_with("--engine-flavour sglang", attn_tp), campaign_cases / 2);
  EXPECT_EQ(cases_with("--engine-flavour vllm", attn_tp), 0u);
  EXPECT_EQ(cases_with("--engine-flavour vllm-ascend", attn_tp), 0u);
}

// Two-batch overlap (drawn true in 1 of 5) and attention CP (2 or 3 in 2 of 8) come with SGLang in
// modest proportion: some cases, fewer than half; under another flavour none.
TEST(FuzzPins, PinnedSglangDrawsOverlapAndCp) {
  const auto tbo = [](const check_case& c) { return c.engine.two_batch_overlap; };
  const auto cp = [](const check_case& c) { return c.engine.attn_cp_size > 1; };
  for (const auto& has :
       {std::function<bool(const check_case&)>(tbo), std::function<bool(const check_case&)>(cp)}) {
    const uint64_t n = cases_with("--engine-flavour sglang", has);
    EXPECT_GT(n, 0u);
    EXPECT_LT(n, campaign_cases / 2);
    EXPECT_EQ(cases_with("--engine-flavour vllm", has), 0u);
  }
}

// SGLang's settings pin every case of a pinned SGLang campaign, which otherwise draws the attention
// TP (1, 2, 4, 8) and the gathered buffer and never a pool of its own (0: max_num_seqs). A pinned
// pool is also the requests a step holds when --max-num-seqs is not given, within it when it is.
TEST(FuzzPins, SglangSettingsPinEveryCase) {
  const pin_case pins[] = {
      {"--max-running-requests 20",
       [](const check_case& c) { return c.engine.req_pool_size == 20 && c.engine.max_num_seqs == 20; }},
      {"--max-num-seqs 5 --max-running-requests 21",
       [](const check_case& c) { return c.engine.req_pool_size == 21 && c.engine.max_num_seqs == 5; }},
      {"--attn-tp-size 8", [](const check_case& c) { return c.engine.attn_tp_size == 8; }},
      {"--attn-tp-size 3", [](const check_case& c) { return c.engine.attn_tp_size == 3; }},
      {"--gathered-buffer true", [](const check_case& c) { return c.engine.gathered_buffer; }},
      {"--gathered-buffer false", [](const check_case& c) { return !c.engine.gathered_buffer; }},
      {"--two-batch-overlap true", [](const check_case& c) { return c.engine.two_batch_overlap; }},
      {"--two-batch-overlap false", [](const check_case& c) { return !c.engine.two_batch_overlap; }},
      {"--attn-cp-size 3", [](const check_case& c) { return c.engine.attn_cp_size == 3; }},
      {"--attn-cp-size 1", [](const check_case& c) { return c.engine.attn_cp_size == 1; }},
      // drawn (zigzag where the drawn CP size is above 1), pinned at any CP size
      {"--cp-strategy zigzag", [](const check_case& c) { return c.engine.cp_zigzag; }},
      {"--cp-strategy interleave", [](const check_case& c) { return !c.engine.cp_zigzag; }},
  };
  for (const char* target : {"sim", "model"})
    for (const auto& p : pins) {
      const std::string sglang = std::string("--target ") + target + " --engine-flavour sglang ";
      EXPECT_EQ(fuzz_cases_with(sglang + p.flags, p.has), campaign_cases) << p.flags;
      EXPECT_LT(fuzz_cases_with(sglang, p.has), campaign_cases)
          << p.flags << ": the unpinned campaign never draws anything else, the check proves nothing";
      EXPECT_EQ(
          fuzz_cases_with(sglang + p.flags,
                          [](const check_case& c) { return c.engine.flavour == engine_flavour::sglang; }),
          campaign_cases);
    }
  // The pinned campaign's cases are its keeps_pins; the unpinned ones mostly are not.
  const cli::fuzz_options o =
      options_of("--engine-flavour sglang --attn-tp-size 8 --max-running-requests 20");
  for (uint64_t i = 0; i < 50; ++i) EXPECT_TRUE(cli::keeps_pins(o, cli::sample_fuzz_case(o, i))) << i;
  EXPECT_LT(
      fuzz_cases_with("--engine-flavour sglang", [&](const check_case& c) { return cli::keeps_pins(o, c); }),
      campaign_cases / 2);
}

// The generators' step to SGLang's defaults (attention TP 1, no gather, the pool of max_num_seqs)
// keeps the pinned flavour, so generators::holds takes it; keeps_pins refuses it under a pinned
// attention TP, pool or gather, and every candidate it keeps still has them.
TEST(FuzzPins, ShrinkerKeepsSglangPins) {
  for (const char* flags : {"--engine-flavour sglang --attn-tp-size 8",
                            "--engine-flavour sglang --max-running-requests 20 --gathered-buffer true"}) {
    const cli::fuzz_options o = options_of(flags);
    int refused = 0;
    for (uint64_t i = 0; i < 20; ++i) {
      const check_case c = cli::sample_fuzz_case(o, i);
      for (const check_case& cand : generators::shrink_candidates(c)) {
        const bool to_defaults = cand.engine.flavour == engine_flavour::sglang &&
                                 cand.engine.attn_tp_size == 1 && !cand.engine.gathered_buffer &&
                                 cand.engine.req_pool_size == 0;
        if (to_defaults && generators::holds(o.profile.pins, cand)) {
          EXPECT_FALSE(cli::keeps_pins(o, cand)) << flags << ": case " << i;
          ++refused;
        }
        if (cli::keeps_pins(o, cand)) {
          EXPECT_EQ(cand.engine.attn_tp_size, c.engine.attn_tp_size) << flags;
          EXPECT_EQ(cand.engine.req_pool_size, c.engine.req_pool_size) << flags;
          EXPECT_EQ(cand.engine.gathered_buffer, c.engine.gathered_buffer) << flags;
        }
      }
    }
    EXPECT_EQ(refused, 20) << flags;  // one such step per case, each refused
  }
}

// Under a pinned SGLang the shrinker still has a step to SGLang's default attention TP (the
// step to vLLM's defaults changes the pinned flavour, so the pin refuses it).
TEST(FuzzPins, ShrinkerResetsSglangSettingsUnderThePinnedFlavour) {
  const cli::fuzz_options o = options_of("--engine-flavour sglang");
  int checked = 0;
  for (uint64_t i = 0; i < campaign_cases && checked < 20; ++i) {
    const check_case c = generators::sample_case(o.profile, o.seed, i);
    if (c.engine.attn_tp_size == 1) continue;
    ++checked;
    bool found = false;
    for (const check_case& cand : generators::shrink_candidates(c))
      found |= generators::holds(o.profile.pins, cand) && cand.engine.attn_tp_size == 1 &&
               cand.engine.flavour == engine_flavour::sglang;
    EXPECT_TRUE(found) << "case " << i << ": attention TP " << c.engine.attn_tp_size;
  }
  EXPECT_EQ(checked, 20);
}

// The shrinker's steps to CUDA-core decode and to split-KV on (generators/shrink.cpp) would undo
// a pinned --batch-invariant true: the pins refuse both, and every candidate kept has both switches.
TEST(FuzzPins, ShrinkerKeepsTheFlashInferSwitches) {
  const cli::fuzz_options o = options_of("--batch-invariant true");
  int refused = 0;
  for (uint64_t i = 0; i < 20; ++i)
    for (const check_case& cand : generators::shrink_candidates(cli::sample_fuzz_case(o, i))) {
      const bool both = cand.flashinfer.tensor_core_decode && cand.flashinfer.disable_split_kv;
      if (!both) {
        EXPECT_FALSE(cli::keeps_pins(o, cand)) << "case " << i;
      }
      refused += !both;
    }
  EXPECT_GE(refused, 40);  // at least the two steps of each case
}

TEST(FuzzPins, EngineArgsFilePinsEveryCaseAndFlagsOverrideIt) {
  const path dir = headroom_test::scratch("fuzz_pins_args");
  const path file = dir / "args.json";
  std::ofstream(file) << R"({"model": "poolside/Laguna-XS.2", "seed": 3, "block_size": 32,
    "max_num_seqs": 8, "max_model_len": 1024, "kv_cache_dtype": "float16", "tensor_parallel_size": 2,
    "mamba_block_size": 128,
    "speculative_config": {"method": "eagle3", "num_speculative_tokens": 2},
    "compilation_config": {"cudagraph_mode": "FULL", "cudagraph_capture_sizes": [1, 2, 4, 8, 16]}})";
  const std::string args = "--engine-args " + file.string();
  const auto from_file = [](int64_t block, int64_t tp = 2) {
    return [block, tp](const check_case& c) {
      const engine_settings& e = c.engine;
      return c.tp == tp && e.mamba_block_size == 128 && c.block_size == block &&
             c.flashinfer.page_size == block && e.max_num_seqs == 8 && e.max_model_len == 1024 &&
             c.model.kv_dtype == dtype::fp16 && e.num_speculative_tokens == 2 &&
             e.cg_mode == cudagraph_mode::full && e.capture_sizes == std::vector<int64_t>{1, 2, 4, 8, 16};
    };
  };
  EXPECT_EQ(cases_with(args, from_file(32)), campaign_cases);
  EXPECT_EQ(cases_with(args + " --block-size 16", from_file(16)), campaign_cases);
  EXPECT_EQ(cases_with(args + " --tp 4", from_file(32, 4)), campaign_cases);
  EXPECT_EQ(cases_with("", from_file(32)), 0u);
}

}  // namespace
