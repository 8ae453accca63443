// FlashInfer's prefill planner on the command line (--flashinfer-prefill fa2|fa3 (auto:
// flashinfer_auto_test.cpp), its --engine-args
// key, cli/engine_flags.cpp): with fa3 check plans the FlashInfer groups' prefill and tensor-core
// decode with PrefillSM90Plan and checks its int workspace parts against the wrappers' fixed 8 MiB
// int workspace; plan prints the plan's fields; a bad value, or fa3 on a target that runs FA2
// bodies, is exit 2 with one line naming the flag and the value. With fa2 check's own DecodePlan and
// PrefillPlan parts are checked against the same 8 MiB, on FA2's own widest prefill step.
//
// The expectations are FlashInfer's layout worked by hand (scheduler.cuh at fb28d72,
// PrefillSM90Plan: seven per-work int32 parts of max_total_num_works entries and work_indptr of
// SMs + 1, each from a multiple of 16 in AlignedAllocator's order), never the mirror's output.
// PrefillPlanImpl, eager and unsplit: request_indices, qo_tile_indices and kv_tile_indices (4
// bytes a work each, from multiples of 16), o_indptr (4 x (batch + 1), from a multiple of 16) and
// the chunk size (4 bytes, alignment 1); a request of q rows is ceil(g q / T) works, g = qo heads /
// kv heads, T the tile height FA2DetermineCtaTileQ gives the average packed length.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backends/flashinfer.hpp"
#include "core/check/plans.hpp"
#include "tests/cli/cli_run.hpp"

namespace {

using namespace headroom_test;
using nlohmann::json;

// The report's buffer_capacity findings on int_workspace (8 MiB), each needing `bytes`.
int int_workspace_overflows(const json& report, int64_t bytes) {
  int hits = 0;
  for (const auto& v : report["violations"])
    if (v["buffer"] == "int_workspace") {
      ++hits;
      EXPECT_EQ(v["invariant"], "buffer_capacity");
      EXPECT_EQ(v["capacity_bytes"], 8388608);
      EXPECT_EQ(v["required_bytes"], bytes);
    }
  return hits;
}

// 1024 query heads, 8 kv heads: at TP 1 the builder plans 1024 heads.
std::string wide_config(const fs::path& dir) { return llama_config(dir, "wide.json", 1024, 8); }

std::string check_of(const std::string& config, int seqs, int tokens = 2048) {
  return "check " + config + " --backend flashinfer --tp 1 --max-num-batched-tokens " +
         std::to_string(tokens) + " --max-num-seqs " + std::to_string(seqs);
}

// Eager decode of N one-row requests on tensor cores: each request is one 128-row tile a head, so
// PrefillSM90Plan writes 1024 N works (ceil(N / 128) + N - 1 <= 4096 works a head: every head is
// scheduled). Parts of 4,096 N bytes (a multiple of 16): six end at 24,576 N, work_indptr's
// 133 x 4 = 532 bytes follow, batch_indices starts at the next multiple of 16 and ends at
// 28,672 N + 544. N = 292: 8,372,768 bytes, inside 8 MiB (8,388,608); N = 293: 8,401,440, and
// batch_indices is the part FlashInfer's allocator names. check's widest prefill step (below) at
// 292 requests and 584 tokens is 292 requests of 2 rows, one tile each: the decode's bytes, so
// the check that fits there runs with 584 batched tokens.
TEST(FlashInferPrefill, Sm90IntWorkspaceFitsThenOverflowsAtAHandComputedBatch) {
  const auto dir = scratch("fi_prefill_sm90_ws");
  const std::string config = wide_config(dir);
  const auto fits = run_cli(check_of(config, 292, 584) + " --flashinfer-prefill fa3");
  EXPECT_EQ(fits.code, 0) << fits.out << fits.err;

  const std::string out = (dir / "r.json").string();
  const auto r = run_cli(check_of(config, 300) + " --flashinfer-prefill fa3 --json " + out);
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("batch_prefill_sm90_batch_indices"), std::string::npos) << r.out;
  const json report = json::parse(slurp(out));
  bool found = false;
  for (const auto& v : report["violations"])
    if (v["buffer"] == "int_workspace") {
      found = true;
      EXPECT_EQ(v["invariant"], "buffer_capacity");
      EXPECT_EQ(v["capacity_bytes"], 8388608);
      EXPECT_EQ(v["required_bytes"], 8401440);  // its batch: the first failing one
    }
  EXPECT_TRUE(found) << report["violations"].dump();
  bool threshold = false;
  for (const auto& t : report["thresholds"])
    if (t.contains("min_failing_decode_batch")) {
      threshold = true;
      EXPECT_EQ(t["min_failing_decode_batch"], 293);
    }
  EXPECT_TRUE(threshold);

  // fa2 (the default) plans with DecodePlan and PrefillPlan, whose int parts fit 8 MiB here: clean.
  EXPECT_EQ(run_cli(check_of(config, 300)).code, 0);
  EXPECT_EQ(run_cli(check_of(config, 300) + " --flashinfer-prefill fa2").code, 0);
  // The engine-args key reaches the check; a flag overrides it.
  const auto args = dir / "args.json";
  std::ofstream(args) << R"({"flashinfer_prefill": "fa3"})";
  EXPECT_EQ(run_cli(check_of(config, 300) + " --engine-args " + args.string()).code, 1);
  EXPECT_EQ(
      run_cli(check_of(config, 300) + " --engine-args " + args.string() + " --flashinfer-prefill fa2").code,
      0);
}

// plan's fields for N = 293 requests and 2,048 tokens. Decode: 1024 x 293 = 300,032 works, all
// allocated (eager), work_indptr of 132 SMs + 1, 128-row tiles, 8,401,440 bytes (above). Prefill:
// check's widest step (above): spare 2,048 - 586 = 1,462 rows, 11 requests of 129 rows, 293 + 11 =
// 304 tiles a head, so 311,296 works; parts of 1,245,184 bytes: six to 7,471,104, work_indptr to 7,471,636,
// batch_indices from 7,471,648 to 8,716,832.
TEST(FlashInferPrefill, PlanPrintsTheSm90Fields) {
  const auto dir = scratch("fi_prefill_sm90_plan");
  const std::string config = wide_config(dir);
  const std::string base =
      "plan " + config + " --backend flashinfer --tp 1 --max-num-batched-tokens 2048 --max-num-seqs 293";
  const std::string out = (dir / "p.json").string();
  const auto r = run_cli(base + " --flashinfer-prefill fa3 --json " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  const json p = json::parse(slurp(out));
  const json& g = p["ranks"][0]["groups"][0];
  const json& q = g["parameters"];
  EXPECT_EQ(q["fa3_prefill"], 1);
  const std::pair<const char*, json> fields[] = {{"sm90_decode_batch", 293},
                                                 {"sm90_decode_work_indptr_len", 133},
                                                 {"sm90_decode_total_works", 300032},
                                                 {"sm90_decode_allocated_works", 300032},
                                                 {"sm90_decode_cta_tile_q", 128},
                                                 {"sm90_decode_same_schedule_for_all_heads", 0},
                                                 {"sm90_decode_int_workspace_bytes", 8401440},
                                                 {"sm90_prefill_batch", 293},
                                                 {"sm90_prefill_tokens", 2048},
                                                 {"sm90_prefill_total_works", 311296},
                                                 {"sm90_prefill_allocated_works", 311296},
                                                 {"sm90_prefill_int_workspace_bytes", 8716832}};
  for (const auto& [name, value] : fields) EXPECT_EQ(q.value(name, json()), value) << name;
  EXPECT_NE(r.out.find("sm90_decode_total_works=300032"), std::string::npos) << r.out;
  // verify plans the dump with PrefillSM90Plan too: decode batch 293 overflows the 8 MiB.
  const auto v = run_cli("verify " + out);
  EXPECT_EQ(v.code, 1) << v.out;
  EXPECT_NE(v.out.find("batch_prefill_sm90_batch_indices"), std::string::npos) << v.out;
  // The group's fa3_prefill decides where the file's flashinfer options do not say (an engine's dump).
  json dump = p;
  dump["flashinfer"].erase("prefill_sm90");
  const auto dumped = dir / "dump.json";
  std::ofstream(dumped) << dump.dump();
  EXPECT_EQ(run_cli("verify " + dumped.string()).code, 1);
  for (auto& group : dump["ranks"][0]["groups"]) group["parameters"]["fa3_prefill"] = 0;
  std::ofstream(dumped) << dump.dump();
  EXPECT_EQ(run_cli("verify " + dumped.string()).code, 0);
  // fa2 (the default) adds none of them.
  EXPECT_EQ(run_cli(base).out.find("fa3_prefill"), std::string::npos);
}

// check's widest prefill step: n = min(max_num_seqs, tokens / 2) requests of 2 rows or more (one
// tile of 128 rows each), the spare tokens - 2n rows as requests of 129 rows, a further tile for
// each 127 rows. PrefillSM90Plan writes 1024 works a tile (1024 heads), eager: parts of 4,096 t
// bytes for t tiles a head, and as in the decode above the last part ends at 28,672 t + 544.
// - 292 requests, 2,048 tokens: spare 1,464, 11 further tiles (1,397 rows), t = 303: 8,688,160
//   bytes. The decode of 292 fits (above), so this is the prefill step's alone.
// - 300 requests: spare 1,448, 11 further tiles, t = 311: 8,917,536 bytes; under auto the decode
//   goes to PrefillPlan, and the prefill step is the one finding.
TEST(FlashInferPrefill, CheckRunsTheWidestPrefillStepAndItsIntWorkspaceOverflows) {
  const auto dir = scratch("fi_prefill_sm90_widest");
  const std::string config = wide_config(dir);
  const std::pair<std::string, int64_t> runs[] = {
      {check_of(config, 292) + " --flashinfer-prefill fa3", 8688160},
      {check_of(config, 300) + " --flashinfer-prefill auto", 8917536}};
  for (const auto& [cmd, bytes] : runs) {
    const std::string out = (dir / "r.json").string();
    const auto r = run_cli(cmd + " --json " + out);
    ASSERT_EQ(r.code, 1) << cmd << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("batch_prefill_sm90_batch_indices"), std::string::npos) << r.out;
    const json report = json::parse(slurp(out));
    EXPECT_EQ(int_workspace_overflows(report, bytes), 1) << cmd << report["violations"].dump();
    for (const auto& t : report["thresholds"])  // no decode batch fails: the prefill step does
      if (t.contains("min_failing_decode_batch")) {
        EXPECT_TRUE(t["min_failing_decode_batch"].is_null()) << cmd;
      }
  }
  // fa2 runs its own widest step (the Fa2 tests below); its int parts fit: clean.
  EXPECT_EQ(run_cli(check_of(config, 300) + " --flashinfer-prefill fa2").code, 0);
}

// At the defaults (256 requests, 8,192 tokens, max_model_len 4,096) with one query head a kv head
// of 128: the average packed length decides the tile. Up to 16 it is 16 rows (one kv step, 16 x
// 128 x 2 + 2 x 128 x 16 x 4 x 2 = 36,864 bytes, fits 232,448), which caps the rows at 17 x 256 -
// 1 = 4,351; a request is a tile for 2 rows and two for 17, so 255 requests of 17 rows (3,839
// spare rows, 15 a tile) and one of 4,351 - 4,335 = 16 rows (one tile): 511 tiles. The 64-row
// tile (all 8,192 rows, average 32) makes a further tile cost 63 rows: 256 + 121 = 377; the
// 128-row one (past 64 a request on average) fewer still. Int workspace: 511 x 4 = 2,044 bytes a
// part at 0, 2,048 and 4,096 (to 6,140), o_indptr 257 x 4 = 1,028 from 6,144 (to 7,172), the chunk
// size to 7,176.
TEST(FlashInferPrefill, Fa2WidestStepAtTheDefaultsUsesTheSixteenRowTile) {
  using namespace headroom;
  const engine_settings e;  // 256 / 8,192 / 4,096
  const flashinfer_options o;
  const batch b = fi_fa2_widest_step(e, 1, 128, o);
  ASSERT_EQ(b.num_seqs(), 256);
  for (int i = 0; i < 255; ++i) EXPECT_EQ(b.query_lens[static_cast<std::size_t>(i)], 17) << i;
  EXPECT_EQ(b.query_lens.back(), 16);
  EXPECT_EQ(b.seq_lens, b.query_lens);  // no context: a context adds kv chunks only to split plans
  const fi_prefill_plan p = plan_fi_prefill(1, 1, 128, b, o);
  EXPECT_EQ(p.cta_tile_q, 16);
  EXPECT_FALSE(p.split_kv);
  EXPECT_EQ(p.padded_batch_size, 511);
  EXPECT_EQ(fi_int_workspace_bytes(p), 7176);
}

// g = 128: every query row is one 128-row tile (packed 128 q, average past 64), so a step of R
// rows is R works however it is split; with 2 requests (o_indptr 3 x 4 = 12 bytes) and R a
// multiple of 4 the parts end at 12 R + 12 + 4. max_model_len 349,526 lets both requests hold
// half of R.
// - R = 699,048: 8,388,576 + 16 = 8,388,592 bytes, inside 8 MiB (8,388,608): exit 0.
// - R = 699,052: 8,388,624 + 16 = 8,388,640 bytes: PrefillPlanImpl's allocator raises (it is
//   kv_tile_indices, from 5,592,416 to 8,388,624, that passes the end): exit 1 on int_workspace.
// PrefillSM90Plan's widest step would stop at 4,096 tiles a head of 128 rows (524,160 rows,
// 6,289,936 bytes for FA2), short of both.
TEST(FlashInferPrefill, Fa2CheckReportsPrefillPlanPastTheIntWorkspace) {
  const auto dir = scratch("fi_fa2_ws");
  const std::string config = llama_config(dir, "g128.json", 128, 1);  // g = 128
  const auto check = [&](int tokens) {
    return "check " + config + " --backend flashinfer --tp 1 --max-num-seqs 2 --max-model-len 349526" +
           " --max-num-batched-tokens " + std::to_string(tokens);
  };
  const auto fits = run_cli(check(699048));
  EXPECT_EQ(fits.code, 0) << fits.out << fits.err;

  const std::string out = (dir / "r.json").string();
  const auto r = run_cli(check(699052) + " --json " + out);
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  const json report = json::parse(slurp(out));
  EXPECT_EQ(int_workspace_overflows(report, 8388640), 1) << report["violations"].dump();
  EXPECT_NE(r.out.find("the planner raises"), std::string::npos) << r.out;
}

TEST(FlashInferPrefill, BadValuesAndTargetsExitTwoWithOneLine) {
  const std::string laguna = source_path("configs/laguna-xs2.json");
  const std::pair<std::string, std::vector<std::string>> cases[] = {
      {"--flashinfer-prefill fa4", {"'--flashinfer-prefill' = \"fa4\"", "expected fa2, fa3 or auto"}},
      {"--flashinfer-prefill", {"'--flashinfer-prefill' = (missing)", "takes a value"}},
  };
  for (const char* cmd : {"check", "plan", "fuzz"})
    for (const auto& [flags, pieces] : cases) {
      const std::string config = std::string(cmd) == "fuzz" ? "" : laguna;
      const auto r = run_cli(std::string(cmd) + " " + config + " " + flags);
      EXPECT_EQ(bad_input_problem(r, pieces), "") << cmd << " " << flags;
    }
  // fa3 where FA2-structured bodies run: refused before any output.
  const std::vector<std::string> runs = {"check " + laguna + " --target sim", "fuzz --target sim --cases 1"};
  for (const std::string& run : runs)
    EXPECT_EQ(bad_input_problem(run_cli(run + " --flashinfer-prefill fa3"),
                                {"'--flashinfer-prefill' = fa3", "--target model only"}),
              "")
        << run;
  const auto dir = scratch("fi_prefill_bad_args");
  const auto f = dir / "args.json";
  std::ofstream(f) << R"({"flashinfer_prefill": "sm90"})";
  EXPECT_EQ(bad_input_problem(run_cli("check " + laguna + " --engine-args " + f.string()),
                              {"args.json", "'flashinfer_prefill'"}),
            "");
}

}  // namespace
