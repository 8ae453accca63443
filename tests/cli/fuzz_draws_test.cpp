// What fuzz draws where no flag pins it, for three settings that size buffers: SGLang's CP strategy
// (zigzag doubles the eager CP padding), an fp8 KV cache (the model target only: sim, gpu and
// engine refuse one) and vLLM's use_trtllm_attention=False (where it changes a FlashInfer plan).
// Each campaign's cases are sampled as its jobs sample them (cli::sample_fuzz_case) from its
// command line, read by the command's own parser; then the pins, the shrinker's steps to the
// defaults, and the --engine-args keys.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cli/fuzz_campaign.hpp"
#include "generators/shrink.hpp"
#include "tests/cli/cli_run.hpp"
#include "tests/cli/fuzz_options.hpp"

namespace {

using namespace headroom;
using headroom_test::fuzz_options_of;

constexpr uint64_t draws = 3000;  // a distribution
constexpr uint64_t pinned = 300;  // a pin

std::vector<check_case> campaign(const std::string& flags, uint64_t n = draws) {
  const cli::fuzz_options o = fuzz_options_of(flags);
  std::vector<check_case> out;
  for (uint64_t i = 0; i < n; ++i) out.push_back(cli::sample_fuzz_case(o, i));
  return out;
}

uint64_t count(const std::vector<check_case>& cases, const std::function<bool(const check_case&)>& has) {
  uint64_t n = 0;
  for (const check_case& c : cases) n += has(c);
  return n;
}

bool fp8(const check_case& c) { return c.model.kv_cache != kv_quant::none; }

// SGLang's attention CP is drawn 1, 2, 3 with weights 6, 1, 1, so above 1 in 2 of 8 cases, and
// zigzag in half of those: 3000 / 8 = 375 cases of a pinned SGLang campaign (standard deviation
// sqrt(3000 x 1/8 x 7/8) = 18; 300..450 asked). Never at CP 1, never under another flavour.
TEST(FuzzDraws, CpStrategyIsDrawnWhereAttentionCpIsOn) {
  const auto zigzag = [](const check_case& c) { return c.engine.cp_zigzag; };
  const auto sglang = campaign("--engine-flavour sglang");
  const uint64_t n = count(sglang, zigzag);
  EXPECT_GE(n, 300u);
  EXPECT_LE(n, 450u);
  for (int64_t cp : {2, 3}) {
    EXPECT_GT(count(sglang, [&](const check_case& c) { return c.engine.attn_cp_size == cp && zigzag(c); }),
              0u);
    EXPECT_GT(count(sglang, [&](const check_case& c) { return c.engine.attn_cp_size == cp && !zigzag(c); }),
              0u);
  }
  EXPECT_EQ(count(sglang, [&](const check_case& c) { return c.engine.attn_cp_size == 1 && zigzag(c); }), 0u);
  const auto any = campaign("--target model");
  EXPECT_GT(count(any, zigzag), 0u);
  EXPECT_EQ(
      count(any,
            [&](const check_case& c) { return zigzag(c) && c.engine.flavour != engine_flavour::sglang; }),
      0u);
}

// The model target: backends drawn alike in 9 cases of 10 (the 10th, near 2^31 token offsets,
// draws no cache), the cache of the model's dtype with weight 6, e4m3 2, e5m2 1 with FlashInfer
// only, so fp8 in 0.9 x (1/3 x 2/8 + 1/3 x 2/8 + 1/3 x 3/9) = 0.9 x 10/36 = 1/4 of the cases: 750
// of 3000 (standard deviation 24; 630..870 asked). e5m2 never with Triton (vLLM's TRITON_ATTN
// asserts on it) or FA3 (FLASH_ATTN refuses it); every fp8 case decodes on tensor cores.
TEST(FuzzDraws, Fp8CacheIsDrawnOnTheModelTargetOnly) {
  const auto model = campaign("--target model");
  std::map<std::pair<backend, kv_quant>, uint64_t> n;
  for (const check_case& c : model) ++n[{c.be, c.model.kv_cache}];
  for (backend be : {backend::triton, backend::fa3, backend::flashinfer}) {
    EXPECT_GT((n[{be, kv_quant::none}]), 0u) << to_string(be);
    EXPECT_GT((n[{be, kv_quant::fp8_e4m3}]), 0u) << to_string(be);
  }
  EXPECT_GT((n[{backend::flashinfer, kv_quant::fp8_e5m2}]), 0u);
  EXPECT_EQ((n[{backend::triton, kv_quant::fp8_e5m2}]), 0u);
  EXPECT_EQ((n[{backend::fa3, kv_quant::fp8_e5m2}]), 0u);
  const uint64_t quantised = count(model, fp8);
  EXPECT_GE(quantised, 630u);
  EXPECT_LE(quantised, 870u);
  EXPECT_EQ(count(model, [](const check_case& c) { return fp8(c) && !c.flashinfer.tensor_core_decode; }), 0u);
  // The targets that refuse an fp8 cache never get one; nor a model campaign whose pins rule it out.
  for (const char* flags :
       {"--target sim", "--target gpu", "--target engine", "--target model --flashinfer-decode cuda-cores",
        "--target model --kv-cache-dtype bfloat16"})
    EXPECT_EQ(count(campaign(flags), fp8), 0u) << flags;
}

// use_trtllm_attention is read only by --flashinfer-prefill auto with an fp8 cache (the decode
// wrapper's q on sm90): drawn False in half of those cases, left unset everywhere else.
TEST(FuzzDraws, TrtllmOffIsDrawnWhereItChangesAPlan) {
  const auto off = [](const check_case& c) { return c.flashinfer.trtllm_attention_off; };
  const auto aut = campaign("--target model --backend flashinfer --flashinfer-prefill auto");
  const uint64_t fp8_fi =
      count(aut, [](const check_case& c) { return fp8(c) && c.be == backend::flashinfer; });
  const uint64_t drawn = count(aut, off);
  EXPECT_GT(fp8_fi, 500u);  // 0.9 x 3000 x 3/9 = 900
  EXPECT_GE(drawn * 10, fp8_fi * 4);
  EXPECT_LE(drawn * 10, fp8_fi * 6);
  EXPECT_EQ(
      count(aut, [&](const check_case& c) { return off(c) && (!fp8(c) || c.be != backend::flashinfer); }),
      0u);
  for (const char* flags :
       {"--target model", "--target model --backend flashinfer", "--target sim --backend flashinfer"})
    EXPECT_EQ(count(campaign(flags), off), 0u) << flags;
}

struct pin_case {
  std::string flags;
  std::function<bool(const check_case&)> has;
};

// Each pinned value on every case; the same campaign unpinned has cases without it, so the check
// can tell a pin from a draw.
TEST(FuzzDraws, PinsHoldOnEveryCase) {
  const std::string fi_auto = "--target model --backend flashinfer --flashinfer-prefill auto";
  const pin_case pins[] = {
      {"--target model --kv-cache-dtype fp8",
       [](const check_case& c) {
         return c.model.kv_cache == kv_quant::fp8_e4m3 && c.flashinfer.tensor_core_decode;
       }},
      {"--target model --backend flashinfer --kv-cache-dtype fp8_e5m2",
       [](const check_case& c) { return c.model.kv_cache == kv_quant::fp8_e5m2; }},
      {"--target model --kv-cache-dtype float16",
       [](const check_case& c) { return !fp8(c) && c.model.kv_dtype == dtype::fp16; }},
      {fi_auto + " --use-trtllm-attention false",
       [](const check_case& c) { return c.flashinfer.trtllm_attention_off; }},
      {fi_auto + " --use-trtllm-attention true",
       [](const check_case& c) { return !c.flashinfer.trtllm_attention_off; }},
      {"--engine-flavour sglang --cp-strategy zigzag",
       [](const check_case& c) { return c.engine.cp_zigzag; }},
      {"--target model --engine-flavour sglang --cp-strategy interleave",
       [](const check_case& c) { return !c.engine.cp_zigzag; }},
  };
  for (const auto& p : pins) {
    EXPECT_EQ(count(campaign(p.flags, pinned), p.has), pinned) << p.flags;
    const std::string unpinned = p.flags.substr(0, p.flags.rfind(" --"));
    EXPECT_LT(count(campaign(unpinned, pinned), p.has), pinned) << unpinned;
  }
}

// The candidate that is the case with one setting back at its default, nothing else changed.
bool has_step(const check_case& c, const std::function<void(check_case&)>& to_default) {
  check_case want = c;
  to_default(want);
  for (const check_case& cand : generators::shrink_candidates(c))
    if (cand == want) return true;
  return false;
}

// The shrinker steps each setting to its default (no fp8 cache, interleave, use_trtllm_attention
// unset) by itself, never to CUDA-core decode over an fp8 cache, and a campaign's pin refuses the
// step: every candidate kept has the pinned value.
TEST(FuzzDraws, ShrinkerPrefersTheDefaultsAndKeepsThePins) {
  struct setting {
    std::string flags, pin;
    std::function<bool(const check_case&)> has;
    std::function<void(check_case&)> to_default;
  };
  const setting settings[] = {
      {"--target model", " --kv-cache-dtype fp8_e4m3",
       [](const check_case& c) { return c.model.kv_cache == kv_quant::fp8_e4m3; },
       [](check_case& c) { c.model.kv_cache = kv_quant::none; }},
      {"--engine-flavour sglang", " --cp-strategy zigzag",
       [](const check_case& c) { return c.engine.cp_zigzag; },
       [](check_case& c) { c.engine.cp_zigzag = false; }},
      {"--target model --backend flashinfer --flashinfer-prefill auto", " --use-trtllm-attention false",
       [](const check_case& c) { return c.flashinfer.trtllm_attention_off; },
       [](check_case& c) { c.flashinfer.trtllm_attention_off = false; }},
  };
  for (const auto& s : settings) {
    int stepped = 0;
    for (const check_case& c : campaign(s.flags, 400)) {
      if (!s.has(c) || stepped == 10) continue;
      ++stepped;
      EXPECT_TRUE(has_step(c, s.to_default)) << s.flags;
      for (const check_case& cand : generators::shrink_candidates(c))
        EXPECT_FALSE(fp8(cand) && !cand.flashinfer.tensor_core_decode) << s.flags;
    }
    EXPECT_EQ(stepped, 10) << s.flags;
    const cli::fuzz_options o = fuzz_options_of(s.flags + s.pin);
    int refused = 0;
    for (uint64_t i = 0; i < 10; ++i)
      for (const check_case& cand : generators::shrink_candidates(cli::sample_fuzz_case(o, i))) {
        if (cli::keeps_pins(o, cand)) {
          EXPECT_TRUE(s.has(cand)) << s.pin;
        }
        refused += !s.has(cand);
      }
    EXPECT_GE(refused, 10) << s.pin;  // the step to the default, from each case
  }
}

// vLLM's own key, attention_config.use_trtllm_attention (vllm/config/attention.py, AttentionConfig),
// and SGLang's cp_strategy, in --engine-args: a value pins every case; null is vLLM's default (auto):
// no pin. A bad value is exit 2, one line naming the file, the key and the value.
TEST(FuzzDraws, EngineArgsKeysPinAndBadValuesNameTheFileKeyAndValue) {
  const auto dir = headroom_test::scratch("fuzz_draws_args");
  const auto write = [&](const std::string& name, const std::string& text) {
    const auto file = dir / name;
    std::ofstream(file) << text;
    return file.string();
  };
  const std::string fi_auto = "--target model --backend flashinfer --flashinfer-prefill auto --engine-args ";
  const auto off = [](const check_case& c) { return c.flashinfer.trtllm_attention_off; };
  const std::string file_off = write("off.json", R"({"attention_config": {"use_trtllm_attention": false}})");
  EXPECT_EQ(count(campaign(fi_auto + file_off, pinned), off), pinned);
  EXPECT_EQ(fuzz_options_of(fi_auto + file_off).profile.pins.trtllm_attention_off, true);
  // The same key reaches check's plans: auto's decode wrapper, asked with fp8 q, resolves to fa3
  // (llama-3-8b: head dim 128 on sm90; fa2 without the key: "fp8 kv needs fp8 q").
  const std::string plan = "plan " + headroom_test::source_path("configs/llama-3-8b.json") +
                           " --tp 1 --backend flashinfer --flashinfer-prefill auto --kv-cache-dtype fp8";
  const auto r = headroom_test::run_cli(plan + " --engine-args " + file_off);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("fa3 for tensor-core decode (sm90, fp8 e4m3 q and kv, head dim 128)"),
            std::string::npos)
      << r.out;
  const std::string file_null = write("null.json", R"({"attention_config": {"use_trtllm_attention": null}})");
  EXPECT_EQ(fuzz_options_of(fi_auto + file_null).profile.pins.trtllm_attention_off, std::nullopt);
  const std::string file_cp = write("cp.json", R"({"cp_strategy": "zigzag"})");
  EXPECT_EQ(count(campaign("--engine-flavour sglang --engine-args " + file_cp, pinned),
                  [](const check_case& c) { return c.engine.cp_zigzag; }),
            pinned);
  const std::pair<std::string, std::string> bad[] = {
      {R"({"attention_config": {"use_trtllm_attention": "no"}})",
       "field 'attention_config.use_trtllm_attention' = \"no\": expected true or false"},
      {R"({"attention_config": {"backend": "FLASHINFER"}})",
       "field 'attention_config.backend' = \"FLASHINFER\": not an engine argument headroom models "
       "(docs/design.md)"},
      {R"({"attention_config": true})", "field 'attention_config' = true: expected an object"},
      {R"({"cp_strategy": "ring"})", "field 'cp_strategy' = \"ring\": expected zigzag or interleave"},
  };
  int i = 0;
  for (const auto& [text, line] : bad) {
    const std::string file = write("bad" + std::to_string(i++) + ".json", text);
    const auto r = headroom_test::run_cli("fuzz --cases 1 --engine-flavour sglang --engine-args " + file);
    EXPECT_EQ(r.code, 2) << text;
    EXPECT_EQ(r.out, "") << text;
    EXPECT_EQ(r.err, "headroom: " + file + ": " + line + "\n") << text;
  }
}

}  // namespace
