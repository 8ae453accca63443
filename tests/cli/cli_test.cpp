// The headroom command end to end: exit codes, the report JSON, replay of a reported case.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct result {
  int code = -1;
  std::string out;
};

result run(const std::string& args) {
  const std::string cmd = std::string(HEADROOM_BIN) + " " + args + " 2>/dev/null";
  result r;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string config(const std::string& name) { return std::string(HEADROOM_SOURCE_DIR) + "/configs/" + name; }

fs::path temp(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("headroom_cli_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

json read_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

TEST(Cli, LagunaModelWideTritonThresholds) {
  const auto out = temp("laguna.json");
  auto r = run("check " + config("laguna-xs2.json") +
               " --tp 1,2,4,8 --backend triton --policy model-wide --json " + out.string());
  ASSERT_EQ(r.code, 1);
  json j = read_json(out);
  EXPECT_FALSE(j["ok"].get<bool>());
  std::map<int64_t, int64_t> min_fail;
  for (const auto& t : j["thresholds"])
    if (!t["min_failing_decode_batch"].is_null())
      min_fail[t["tp"].get<int64_t>()] = t["min_failing_decode_batch"].get<int64_t>();
  EXPECT_EQ(min_fail, (std::map<int64_t, int64_t>{{1, 13}, {2, 25}, {4, 49}, {8, 97}}));
  const json& v = j["violations"][0];
  for (const char* key : {"invariant", "backend", "tp", "group", "layers", "buffer", "capacity_bytes",
                          "required_bytes", "case"})
    EXPECT_TRUE(v.contains(key)) << key;
  EXPECT_EQ(v["invariant"], "buffer_capacity");

  // The model is stored once; the violation names it.
  ASSERT_EQ(j["models"].size(), 1u);
  EXPECT_EQ(v["case"]["model_ref"], 0);
  EXPECT_FALSE(v["case"].contains("model"));
  // The violation replays to the same verdict from the report, on the formulas and on the
  // simulator, and as a standalone case with its model put back.
  EXPECT_EQ(run("replay " + out.string() + " --violation 0").code, 1);
  EXPECT_EQ(run("replay " + out.string() + " --violation 0 --target sim").code, 1);
  json c = v["case"];
  c["model"] = j["models"][0];
  c.erase("model_ref");
  const auto case_file = temp("case.json");
  std::ofstream(case_file) << c.dump();
  EXPECT_EQ(run("replay " + case_file.string()).code, 1);
}

TEST(Cli, PerLayerIsCleanOnBothBackendsAtEveryTp) {
  auto r = run("check " + config("laguna-xs2.json") + " --tp 1,2,4,8 --backend all");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("verdict: OK"), std::string::npos);
}

TEST(Cli, PlanShowsSglangsFa3ScheduleUnderTheSglangFlavour) {
  // vLLM's FA3 builder is what the vllm flavour plans; under sglang the fa3 groups give way to
  // SGLang's schedule (core/check/sglang_fa3_plan.hpp), with the config's geometry over TP.
  const auto vllm = run("plan " + config("llama-3-8b.json") + " --backend fa3 --tp 2");
  ASSERT_EQ(vllm.code, 0) << vllm.out;
  EXPECT_NE(vllm.out.find("fa3 group 0"), std::string::npos) << vllm.out;
  EXPECT_EQ(vllm.out.find("SGLang fa3 decode schedule"), std::string::npos);
  const auto sg = run("plan " + config("llama-3-8b.json") + " --backend fa3 --tp 2 --engine-flavour sglang");
  ASSERT_EQ(sg.code, 0) << sg.out;
  EXPECT_EQ(sg.out.find("fa3 group 0"), std::string::npos) << sg.out;
  EXPECT_NE(sg.out.find("tp 2: SGLang fa3 decode schedule"), std::string::npos) << sg.out;
  EXPECT_NE(sg.out.find("scheduled with the config's 16 heads, 4 kv heads, head_dim 128"), std::string::npos)
      << sg.out;
}

TEST(Cli, LegacyGroupingReportsGroupAgreement) {
  const auto out = temp("legacy.json");
  auto r = run("check " + config("laguna-xs2.json") +
               " --grouping legacy --policy per-layer --no-hybrid --json " + out.string());
  ASSERT_EQ(r.code, 1);
  EXPECT_EQ(read_json(out)["violations"][0]["invariant"], "group_agreement");
}

TEST(Cli, UniformLlamaIsCleanUnderEveryPolicyAndGrouping) {
  for (const char* p : {"per-layer", "model-wide", "max"})
    for (const char* g : {"heads", "legacy", "proposer"})
      EXPECT_EQ(
          run("check " + config("llama-3-8b.json") + " --tp 1,2,4,8 --policy " + p + " --grouping " + g).code,
          0)
          << p << " " << g;
}

TEST(Cli, UsageErrorsExit2AndWriteNothing) {
  const auto out = temp("never.json");
  fs::remove(out);
  EXPECT_EQ(run("check " + config("laguna-xs2.json") + " --policy fixed --json " + out.string()).code, 2);
  EXPECT_EQ(run("check " + config("laguna-xs2.json") + " --tight 0.5").code, 2);
  EXPECT_EQ(run("check " + config("laguna-xs2.json") + " --bogus").code, 2);
  EXPECT_EQ(run("check " + config("laguna-xs2.json") + " --kv-layout interleaved").code, 2);
  EXPECT_EQ(run("fuzz --cases 1 --kv-layout interleaved").code, 2);
  EXPECT_EQ(run("check").code, 2);
  EXPECT_EQ(run("frobnicate").code, 2);
  EXPECT_EQ(run("replay /nonexistent/case.json").code, 2);
  EXPECT_EQ(run("check " + config("laguna-xs2.json") + " --json /nonexistent/dir/r.json").code, 2);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(run("--help").code, 0);
  EXPECT_EQ(run("check --help").code, 0);
}

TEST(Cli, DeeplyNestedInputExits2) {
  // 200k nested lists used to crash the error message (exit 139) in check and replay.
  const auto deep = temp("deep.json");
  std::ofstream(deep) << std::string(200000, '[') << std::string(200000, ']');
  const auto out = temp("deep_out.json");
  fs::remove(out);
  EXPECT_EQ(run("check " + deep.string() + " --json " + out.string()).code, 2);
  EXPECT_EQ(run("replay " + deep.string() + " --json " + out.string()).code, 2);
  EXPECT_FALSE(fs::exists(out));
}

TEST(Cli, UnwritableJsonFolderExits2BeforePrinting) {
  // The folder exists but nothing can be created in it (procfs refuses even root, who ignores
  // file modes): exit 2 with nothing printed, where the report used to be printed first.
  auto r = run("check " + config("llama-3-8b.json") + " --json /proc/headroom_report.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  if (::geteuid() == 0) return;
  const auto dir = temp("read_only");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  r = run("check " + config("llama-3-8b.json") + " --json " + (dir / "r.json").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(fs::is_empty(dir));
  fs::permissions(dir, fs::perms::owner_all);
}

TEST(Cli, JsonFolderProbeLeavesNothingBehind) {
  const auto dir = temp("probe");
  fs::create_directories(dir);
  EXPECT_EQ(run("check " + config("laguna-xs2.json") + " --tp 5 --json " + (dir / "r.json").string()).code,
            2);
  EXPECT_TRUE(fs::is_empty(dir));
  EXPECT_EQ(run("check " + config("llama-3-8b.json") + " --json " + (dir / "r.json").string()).code, 0);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(Cli, FuzzOutFolderThatCannotBeWrittenExits2BeforeAnyCase) {
  // procfs exists as a folder but refuses new files even to root: exit 2 before the campaign,
  // nothing printed (it used to run, then fail at its first counterexample, or pass if it found
  // none).
  for (const char* policy : {"model-wide", "per-layer"}) {
    const auto r = run(std::string("fuzz --seed 1 --cases 2 --policy ") + policy + " --out /proc");
    EXPECT_EQ(r.code, 2) << policy;
    EXPECT_EQ(r.out, "") << policy;
  }
  const auto dir = temp("fuzz_out");
  fs::create_directories(dir);
  EXPECT_EQ(run("fuzz --seed 1 --cases 2 --out " + dir.string()).code, 0);
  EXPECT_TRUE(fs::is_empty(dir));  // the probe leaves nothing behind
}

TEST(Cli, MaxNumSeqsIsBounded) {
  // The largest accepted value runs (batches 1..N are built up front: ~N^2 memory); past it,
  // exit 2 and nothing written. 65536 used to be accepted and needed ~34 GB.
  const auto out = temp("seqs.json");
  fs::remove(out);
  EXPECT_EQ(run("check " + config("llama-3-8b.json") + " --tp 1 --max-num-seqs 4096").code, 0);
  EXPECT_EQ(run("check " + config("llama-3-8b.json") + " --max-num-seqs 4097 --json " + out.string()).code,
            2);
  EXPECT_FALSE(fs::exists(out));
}

TEST(Cli, TightIsReportedOnlyWhenAsked) {
  EXPECT_EQ(run("check " + config("llama-3-8b.json") + " --backend flashinfer").code, 0);
  const auto out = temp("tight.json");
  EXPECT_EQ(
      run("check " + config("llama-3-8b.json") + " --backend flashinfer --tight 4 --json " + out.string())
          .code,
      1);
  EXPECT_EQ(read_json(out)["violations"][0]["invariant"], "tight_bound");
}

}  // namespace
