// Hostile inputs against the contract (exit 2, one line naming the file, the field and the value,
// nothing on stdout): numbers past the double range, files that are not regular or too large,
// values that would break the line, unknown commands.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <sys/stat.h>

#include "tests/cli/cli_run.hpp"

namespace {

using namespace headroom_test;

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// The contract for bad input, with the pieces the one line must name.
void expect_one_line(const cli_result& r, std::initializer_list<std::string> pieces) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  for (const auto& p : pieces) EXPECT_NE(r.err.find(p), std::string::npos) << p << " in " << r.err;
}

TEST(InputContract, NumberPastTheDoubleRangeNamesItsField) {
  const auto dir = scratch("d1");
  write_file(dir / "cfg.json", R"({"num_hidden_layers": 2, "num_attention_heads": 8, "head_dim": 1e400})");
  expect_one_line(run_cli("check " + (dir / "cfg.json").string()),
                  {"cfg.json", "'head_dim'", "1e400", "out of range"});
  std::string c = slurp(source_path("regressions/triton-index-overflow.json"));
  c.replace(c.find("\"tp\": 1"), 7, "\"tp\": 1e400");
  write_file(dir / "case.json", c);
  expect_one_line(run_cli("replay " + (dir / "case.json").string()),
                  {"case.json", "'tp'", "1e400", "out of range"});
  c = slurp(source_path("regressions/triton-index-overflow.json"));
  c.replace(c.find("\"head_size\": 4096"), 17, "\"head_size\": -1e999");
  write_file(dir / "nested.json", c);
  expect_one_line(run_cli("replay " + (dir / "nested.json").string()),
                  {"nested.json", "'model.layers[0].head_size'", "-1e999", "out of range"});
}

TEST(InputContract, OnlyBoundedRegularFilesAreRead) {
  const auto dir = scratch("d2");
  const std::string limit = "timeout 20 ";  // exit 124 if the command hangs or reads forever
  expect_one_line(run_cli("check /dev/zero", limit), {"/dev/zero", "device"});
  ASSERT_EQ(::mkfifo((dir / "f.json").c_str(), 0644), 0);
  expect_one_line(run_cli("check " + (dir / "f.json").string(), limit), {"f.json", "FIFO"});
  expect_one_line(run_cli("replay " + (dir / "f.json").string(), limit), {"f.json", "FIFO"});
  write_file(dir / "big.json", "");
  fs::resize_file(dir / "big.json", std::uintmax_t{1} << 30);  // sparse: 1 GiB of NUL bytes
  const auto t0 = std::chrono::steady_clock::now();
  expect_one_line(run_cli("check " + (dir / "big.json").string(), limit), {"big.json", "64 MiB"});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  expect_one_line(run_cli("check " + dir.string(), limit), {"directory"});
}

TEST(InputContract, ValuesNeverBreakTheLine) {
  const auto dir = scratch("d8");
  write_file(dir / "cfg.json", R"({"num_hidden_layers": 2, "num_attention_heads": 8, "head_dim": 64,
    "dtype": "bf16\nverdict: OK (every invariant holds)\r\u001b[2J"})");
  auto r = run_cli("check " + (dir / "cfg.json").string());
  expect_one_line(r, {"cfg.json", "'dtype'", "\\nverdict: OK", "\\r"});
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
  write_file(dir / "long.json", R"({"num_hidden_layers": 2, "num_attention_heads": 8, "head_dim": 64,
    "dtype": ")" + std::string(10'000'000, 'x') +
                                    "\"}");
  r = run_cli("check " + (dir / "long.json").string());
  expect_one_line(r, {"long.json", "'dtype'", "(10000002 bytes)"});
  EXPECT_LT(r.err.size(), 1000u);
  const std::string odd_name = "a\nverdict: OK.json";  // a file name is a value too
  write_file(dir / odd_name, "{");
  expect_one_line(run_cli("check '" + (dir / odd_name).string() + "'"), {"a\\nverdict: OK.json"});
}

TEST(InputContract, InputTextCannotAddReportLines) {
  // The report on stdout shows the input's path and layer names too: one line each.
  const auto dir = scratch("d8_report");
  const auto odd = dir / "x\nverdict: OK (every invariant holds).json";
  fs::copy_file(source_path("configs/laguna-xs2.json"), odd);
  const auto r = run_cli("check '" + odd.string() + "' --policy model-wide --backend triton");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out.find("\nverdict: OK"), std::string::npos) << r.out.substr(0, 300);
  EXPECT_NE(r.out.find("x\\nverdict: OK"), std::string::npos) << r.out.substr(0, 300);
}

TEST(InputContract, LayerCountIsRefusedEarlyPastTheLimit) {
  // A 70-byte config claiming 10^6 layers took 8-14 s and 1.56 GB before anything was said.
  const auto dir = scratch("layers");
  const auto claim = [&](int64_t n) {
    const auto p = dir / ("l" + std::to_string(n) + ".json");
    write_file(p, "{\"num_hidden_layers\": " + std::to_string(n) +
                      ", \"num_attention_heads\": 8, \"head_dim\": 64}");
    return p.string();
  };
  auto t0 = std::chrono::steady_clock::now();
  expect_one_line(run_cli("check " + claim(1'000'000)),
                  {"l1000000.json", "'num_hidden_layers'", "1000000", "1..100000"});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(run_cli("check " + claim(100'000)).code, 0);  // the limit itself: about 0.5 s
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(InputContract, SimulatorLimitsNameTheFile) {
  // The message used to put the layer where the file belongs ("model.layers.0.self_attn.attn:
  // field 'head_size' = 4096: ...").
  const std::string stored = source_path("regressions/triton-index-overflow.json");
  auto r = run_cli("replay " + stored + " --target sim");
  expect_one_line(r, {"'head_size'", "4096", "layer model.layers.0.self_attn.attn", "simulator"});
  EXPECT_EQ(r.err.rfind("headroom: " + stored + ": ", 0), 0u) << r.err;
  const auto dir = scratch("d10");
  write_file(dir / "wide.json", R"({"num_hidden_layers": 2, "num_attention_heads": 8, "head_dim": 1024})");
  r = run_cli("check " + (dir / "wide.json").string() + " --target sim");
  expect_one_line(r, {"'head_size'", "1024", "simulator"});
  EXPECT_EQ(r.err.rfind("headroom: " + (dir / "wide.json").string() + ": ", 0), 0u) << r.err;
}

// The engine-step fields of a case file (docs/catalogue.md C3-C8): a bad value is exit 2 with one
// line naming the file, the field and the value, and nothing written.
TEST(InputContract, EngineStepFieldsNameTheirField) {
  const auto dir = scratch("steps");
  struct edit {
    const char* stored;
    std::string from, to, field, value;
  };
  const std::string draft = "regressions/c8-draft-reuses-verify-metadata.json";
  const edit edits[] = {
      {draft.c_str(), "\"flavour\": \"vllm\"", "\"flavour\": \"tgi\"", "'engine.flavour'", "tgi"},
      {draft.c_str(), "\"req_pool_size\": 0", "\"req_pool_size\": -1", "'engine.req_pool_size'", "-1"},
      {draft.c_str(), "\"attn_tp_size\": 1", "\"attn_tp_size\": 65", "'engine.attn_tp_size'", "65"},
      {draft.c_str(), "\"gathered_buffer\": false", "\"gathered_buffer\": \"yes\"",
       "'engine.gathered_buffer'", "yes"},
      {draft.c_str(), "\"pass\": 2", "\"pass\": 3", "'step.pass'", "3"},
      {draft.c_str(), "\"pass\": 2", "\"pass\": -1", "'step.pass'", "-1"},
      {draft.c_str(), "\"backend\": \"triton\"", "\"backend\": \"fa4\"", "'backend'", "fa4"},
      {"regressions/c6-int32-token-offsets.json", "\"tokens\": 4194305", "\"tokens\": 4194306",
       "'step.tokens'", "4194306"},
      // a uniform decode dummy of 129 one-token requests where max_num_seqs is 1
      {"regressions/c4-dummy-seq-lens-unclamped.json", "\"uniform\": false", "\"uniform\": true",
       "'step.tokens'", "129"},
      {"regressions/c7-empty-work-unclamped.json", "\"compress_ratio\": 4", "\"compress_ratio\": -1",
       "'layers[0].compress_ratio'", "-1"},
  };
  for (const auto& e : edits) {
    std::string c = slurp(source_path(e.stored));
    ASSERT_NE(c.find(e.from), std::string::npos) << e.from;
    c.replace(c.find(e.from), e.from.size(), e.to);
    write_file(dir / "case.json", c);
    const auto out = dir / "out.json";
    expect_one_line(run_cli("replay " + (dir / "case.json").string() + " --json " + out.string()),
                    {"case.json", e.field, e.value});
    EXPECT_FALSE(fs::exists(out)) << e.field;
  }
}

// Draft pass 0 is the capture's one-token draft pass: without FULL graphs there is no capture.
TEST(InputContract, CaptureDraftPassNeedsFullGraphs) {
  const auto dir = scratch("pass0");
  std::string c = slurp(source_path("regressions/c8-draft-reuses-verify-metadata.json"));
  for (auto [from, to] :
       {std::pair<std::string, std::string>{"\"pass\": 2", "\"pass\": 0"},
        {"\"cudagraph_mode\": \"full_and_piecewise\"", "\"cudagraph_mode\": \"piecewise\""}}) {
    ASSERT_NE(c.find(from), std::string::npos) << from;
    c.replace(c.find(from), from.size(), to);
  }
  write_file(dir / "case.json", c);
  expect_one_line(run_cli("replay " + (dir / "case.json").string()),
                  {"case.json", "'step.pass'", "0", "FULL"});
}

// A --tp of 50,000 entries ran for more than 10 s before anything was said; a repeated TP size
// doubled the report. Both are refused before any work: at most 64 distinct sizes.
TEST(InputContract, TpListIsBoundedAndDistinct) {
  const std::string cfg = source_path("configs/laguna-xs2.json");
  std::string many = "1";
  for (int i = 1; i < 50'000; ++i) many += ",1";
  const auto t0 = std::chrono::steady_clock::now();
  expect_one_line(run_cli("check " + cfg + " --tp " + many),
                  {"'--tp' = (50000 values)", "at most 64 values"});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  std::string sixty_five = "1";
  for (int tp = 2; tp <= 65; ++tp) sixty_five += "," + std::to_string(tp);
  expect_one_line(run_cli("plan " + cfg + " --tp " + sixty_five), {"'--tp' = (65 values)", "at most 64"});
  expect_one_line(run_cli("check " + cfg + " --tp 1,2,1"), {"'--tp' = 1,2,1", "repeats 1"});
}

// --time 0x1p-1074s (a denormal in hex notation) was taken by strtod and ran one case; a
// duration is decimal (digits and an optional fraction), and one that rounds to 0 ns is refused
// like 0s.
TEST(InputContract, DurationsAreDecimalAndMoreThanZero) {
  for (const char* t : {"0x1p-1074s", "0x1p-1074", "inf", "infs", "nan", "1e3s", "-1s", "+1s", " 1s",
                        "1.2.3s", ".s", "s", "1d"}) {
    const auto t0 = std::chrono::steady_clock::now();
    expect_one_line(run_cli(std::string("fuzz --target model --time '") + t + "'"),
                    {"'--time'", "expected a decimal duration"});
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1)) << t;
  }
  for (const char* t : {"0s", "0", "0.0m", "0.0000000001s", "0.0000000000001h"})
    expect_one_line(run_cli(std::string("fuzz --target model --time ") + t),
                    {std::string("'--time' = ") + t, "must be more than 0 s"});
}

TEST(InputContract, UnknownCommandIsOneLine) {
  auto r = run_cli("frobnicate");
  expect_one_line(r, {"frobnicate", "--help"});
  r = run_cli("$(printf 'x\\033[2Jy')");
  expect_one_line(r, {"x\\x1b[2Jy"});
}

}  // namespace
