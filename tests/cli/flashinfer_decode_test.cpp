// FlashInfer's decode path and vLLM's batch-invariant mode on the command line (--flashinfer-decode,
// --batch-invariant and their --engine-args keys, cli/engine_flags.cpp): check reaches catalogue
// C10 with them (the mutant fails from the first decode batch, the fixed mirror and either switch
// alone are clean), the default is vLLM's tensor-core decode, plan carries both switches, and a bad
// value is exit 2 with one line naming the flag (or the file and the key) and the value.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.hpp"

namespace {

using namespace headroom_test;
using nlohmann::json;

const std::string laguna = source_path("configs/laguna-xs2.json");
const std::string graphs = "check " + laguna + " --backend flashinfer --tp 1 --cuda-graph";
const std::string c10 = " --mutant fi-graph-grid-unwritten";

// Laguna XS.2 at TP 1 has 4 FlashInfer groups of 8 kv heads. Under FULL graphs with split-KV
// disabled the pre-fix planner pads one decode request (1 tile) to 2 x 132 / 8 = 33 blocks a kv
// head with no block_valid_mask: 32 x 8 blocks read the 3 index arrays unwritten, 768 reads.
TEST(FlashInferDecode, CheckReachesC10WithTheFlags) {
  const auto dir = scratch("fi_decode_c10");
  const std::string out = (dir / "r.json").string();
  const auto r = run_cli(graphs + " --batch-invariant true" + c10 + " --json " + out);
  ASSERT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("VIOLATION uninitialized_read [C10]: flashinfer tp 1 group 0"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("768 reads of work entries the planner never wrote"), std::string::npos) << r.out;
  const json report = json::parse(slurp(out));
  int c10_groups = 0;
  for (const auto& t : report["thresholds"])
    if (t.value("class", "") == "C10") {
      ++c10_groups;
      EXPECT_EQ(t["variable"], "capture_size");
      EXPECT_EQ(t["min_failing"], 1);  // the FULL graph of one decode request
    }
  EXPECT_EQ(c10_groups, 4);
  ASSERT_FALSE(report["violations"].empty());
  for (const auto& v : report["violations"]) {
    EXPECT_EQ(v["invariant"], "uninitialized_read");
    EXPECT_EQ(v["class"], "C10");
  }
  // The violation's case is the failing decode batch, one request, with both switches: it replays.
  const json& c = report["violations"][0]["case"];
  EXPECT_EQ(c["batch"]["query_lens"], json::array({1}));
  EXPECT_EQ(c["flashinfer"]["tensor_core_decode"], true);
  EXPECT_EQ(c["flashinfer"]["disable_split_kv"], true);
  EXPECT_EQ(c["flashinfer"]["cuda_graph"], true);
  EXPECT_EQ(run_cli("replay " + out + " --violation 0").code, 1);
  // Tensor cores are the default: naming them changes nothing.
  EXPECT_EQ(run_cli(graphs + " --flashinfer-decode tensor-cores --batch-invariant true" + c10).out, r.out);
  // The fixed mirror is clean; so is the mutant without either switch.
  EXPECT_EQ(run_cli(graphs + " --batch-invariant true").code, 0);
  for (const char* off : {"", " --batch-invariant false", " --flashinfer-decode cuda-cores"}) {
    const auto clean = run_cli(graphs + off + c10);
    EXPECT_EQ(clean.code, 0) << off << ": " << clean.out;
  }
}

// The same switches from a file of engine arguments (the mirror's keys: vLLM's are an environment
// variable and a constant), and a flag overriding the file.
TEST(FlashInferDecode, EngineArgsKeysReachTheCheck) {
  const auto dir = scratch("fi_decode_args");
  const auto args = dir / "args.json";
  std::ofstream(args)
      << R"({"max_num_seqs": 64, "batch_invariant": true, "flashinfer_decode": "tensor-cores"})";
  const std::string with_file = graphs + c10 + " --engine-args " + args.string();
  EXPECT_EQ(run_cli(with_file).code, 1);
  EXPECT_EQ(run_cli(with_file + " --batch-invariant false").code, 0);
}

// On the CUDA-core decode plan (vLLM before v0.10.2) Laguna's model-wide 48 heads overflow tmp_s,
// which holds 48 heads' rows a work item while the 64-head layers write 64 (docs/engines.md §6);
// on tensor cores, the default, the scratch is sized per 16-row tile and holds them.
TEST(FlashInferDecode, DefaultIsVllmsTensorCoreDecode) {
  const std::string wide = "check " + laguna + " --backend flashinfer --tp 1 --policy model-wide";
  const auto tc = run_cli(wide);
  EXPECT_EQ(tc.code, 1);
  EXPECT_EQ(tc.out.find("tmp_s"), std::string::npos) << tc.out;
  EXPECT_EQ(run_cli(wide + " --flashinfer-decode tensor-cores").out, tc.out);
  const auto cc = run_cli(wide + " --flashinfer-decode cuda-cores");
  EXPECT_NE(cc.out.find("VIOLATION buffer_capacity [C1]: flashinfer tp 1 group 1 (10 layers) tmp_s"),
            std::string::npos)
      << cc.out;
}

TEST(FlashInferDecode, PlanCarriesBothSwitches) {
  const auto plan = [](const std::string& flags) {
    return run_cli("plan " + laguna + " --backend flashinfer --tp 1 " + flags).out;
  };
  EXPECT_NE(plan("").find("use_tensor_cores=1"), std::string::npos);
  EXPECT_NE(plan("").find("disable_split_kv=0"), std::string::npos);
  EXPECT_NE(plan("--flashinfer-decode cuda-cores").find("use_tensor_cores=0"), std::string::npos);
  const std::string bi = plan("--batch-invariant true");
  EXPECT_NE(bi.find("disable_split_kv=1"), std::string::npos) << bi;
  EXPECT_NE(bi.find("float_workspace_buffer   uint8     [2147483648]"), std::string::npos) << bi;
}

TEST(FlashInferDecode, BadValuesNameTheFlagAndTheValue) {
  const std::pair<std::string, std::vector<std::string>> cases[] = {
      {"--flashinfer-decode tensor_cores",
       {"'--flashinfer-decode' = \"tensor_cores\"", "expected tensor-cores or cuda-cores"}},
      {"--flashinfer-decode", {"'--flashinfer-decode' = (missing)", "takes a value"}},
      {"--batch-invariant 1", {"'--batch-invariant' = \"1\"", "expected true or false"}},
      {"--flashinfer-decode cuda-cores --batch-invariant true",
       {"'--batch-invariant' = true", "with cuda-cores decode", "always decodes on tensor cores"}},
  };
  for (const char* cmd : {"check", "plan", "fuzz"})
    for (const auto& [flags, pieces] : cases) {
      const std::string config = std::string(cmd) == "fuzz" ? "" : laguna;
      const auto r = run_cli(std::string(cmd) + " " + config + " " + flags);
      EXPECT_EQ(r.code, 2) << cmd << " " << flags;
      EXPECT_EQ(r.out, "") << cmd << " " << flags;
      EXPECT_EQ(r.err_lines(), 1) << cmd << " " << flags << ": " << r.err;
      for (const auto& p : pieces) EXPECT_NE(r.err.find(p), std::string::npos) << p << " in " << r.err;
    }
  const auto dir = scratch("fi_decode_bad_args");
  const std::pair<std::string, std::string> keys[] = {
      {R"({"batch_invariant": 1})", "'batch_invariant' = 1"},
      {R"({"flashinfer_decode": "fast"})", "'flashinfer_decode'"}};
  for (const auto& [text, piece] : keys) {
    const auto f = dir / "args.json";
    std::ofstream(f) << text;
    const auto r = run_cli("check " + laguna + " --engine-args " + f.string());
    EXPECT_EQ(r.code, 2) << text;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find("args.json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(piece), std::string::npos) << r.err;
  }
}

}  // namespace
