// Case JSON round trip and its error paths.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "core/check/case.hpp"
#include "core/util/error.hpp"
#include "tests/support/laguna.hpp"

namespace headroom {
namespace {

check_case sample() {
  check_case c;
  c.model = testing::laguna_xs2();
  c.tp = 2;
  c.be = backend::flashinfer;
  c.pol = policy::model_wide;
  c.grp = grouping::proposer;
  c.hybrid = false;
  c.layout = kv_layout::separate;  // not the default: the round trip must carry it
  c.b = batch{{300, 17}, {1, 5}};
  c.seed = 0xfeedfacecafebeefULL;
  c.engine.max_num_seqs = 64;
  c.engine.max_model_len = 1024;
  c.engine.num_speculative_tokens = 2;
  c.engine.cg_mode = cudagraph_mode::full;
  c.engine.capture_sizes = {1, 2, 4, 8};
  c.step = {step_kind::dummy, 8, true, 0};
  c.mutants = {"dummy-seq-lens-unclamped", "model-wide-heads"};
  c.triton.cap_max_num_seqs = true;
  c.flashinfer.cuda_graph = true;
  c.flashinfer.device.blocks_per_sm[4] = 5;
  return c;
}

// Case files written before the engine settings: Triton's max_num_seqs and max_capture_size are
// engine settings now, and kv_from_group_spec false is the triton-model-kv-heads mutant.
TEST(CaseJson, ReadsTheOlderTritonKeys) {
  auto j = to_json(sample());
  j.erase("engine");
  j.erase("mutants");
  j["triton"] = {{"max_num_seqs", 8}, {"max_capture_size", 16}, {"kv_from_group_spec", false}};
  const check_case c = case_from_json(j, "old.json");
  EXPECT_EQ(c.engine.max_num_seqs, 8);
  EXPECT_EQ(c.engine.max_capture_size, 16);
  EXPECT_EQ(c.mutants, (mutant_set{"triton-model-kv-heads"}));
}

TEST(CaseJson, RoundTripsLosslessly) {
  const check_case c = sample();
  const auto j = to_json(c);
  EXPECT_EQ(case_from_json(j, "mem"), c);
  EXPECT_EQ(case_from_json(nlohmann::json::parse(j.dump()), "mem"), c);
}

// A new case is vLLM's packed KV cache; a file without the field predates it and means separate.
TEST(CaseJson, KvLayoutDefaultsToPackedAndAbsentMeansSeparate) {
  EXPECT_EQ(check_case{}.layout, kv_layout::packed);
  auto j = to_json(sample());
  EXPECT_EQ(j.at("kv_layout"), "separate");
  j["kv_layout"] = "packed";
  EXPECT_EQ(case_from_json(j, "mem").layout, kv_layout::packed);
  j.erase("kv_layout");
  EXPECT_EQ(case_from_json(j, "old.json").layout, kv_layout::separate);
}

void expect_field_error(nlohmann::json j, const std::string& field) {
  try {
    case_from_json(j, "case.json");
    FAIL() << "no error for " << field;
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("case.json"), std::string::npos) << e.what();
  }
}

TEST(CaseJson, BadFieldsNameTheField) {
  auto j = to_json(sample());
  auto bad = j;
  bad["tp"] = -1;
  expect_field_error(bad, "tp");
  bad = j;
  bad["backend"] = "cuda";
  expect_field_error(bad, "backend");
  bad = j;
  bad["batch"]["query_lens"] = {1};
  expect_field_error(bad, "batch.query_lens");
  bad = j;
  bad["batch"]["seq_lens"] = {300, "x"};
  expect_field_error(bad, "batch.seq_lens[1]");
  bad = j;
  bad["batch"]["query_lens"] = {1, 99};
  expect_field_error(bad, "batch.query_lens[1]");
  bad = j;
  bad["seed"] = -4;
  expect_field_error(bad, "seed");
  bad = j;
  bad.erase("policy");
  expect_field_error(bad, "policy");
  bad = j;
  bad["triton"]["max_num_seqs"] = 0;
  expect_field_error(bad, "triton.max_num_seqs");
  bad = j;
  bad["engine"]["max_num_seqs"] = 0;
  expect_field_error(bad, "engine.max_num_seqs");
  bad = j;
  bad["engine"]["max_model_len"] = -5;
  expect_field_error(bad, "engine.max_model_len");
  bad = j;
  bad["engine"]["cudagraph_mode"] = "fast";
  expect_field_error(bad, "engine.cudagraph_mode");
  bad = j;
  bad["engine"]["capture_sizes"] = {1, 0};
  expect_field_error(bad, "engine.capture_sizes[1]");
  bad = j;
  bad["engine"]["num_speculative_tokens"] = 99;
  expect_field_error(bad, "engine.num_speculative_tokens");
  bad = j;
  bad["step"]["kind"] = "warm";
  expect_field_error(bad, "step.kind");
  bad = j;
  bad["step"]["tokens"] = 0;
  expect_field_error(bad, "step.tokens");
  bad = j;
  bad["kv_layout"] = "interleaved";
  expect_field_error(bad, "kv_layout");
  bad = j;
  bad["kv_layout"] = 1;
  expect_field_error(bad, "kv_layout");
  bad = j;
  bad["mutants"] = {"no-such-bug"};
  expect_field_error(bad, "mutants");
  bad = j;
  bad["mutants"] = {3};
  expect_field_error(bad, "mutants[0]");
  expect_field_error(nlohmann::json::array(), "<case>");
}

TEST(CaseJson, OptionsThatAreNotObjectsAreRejected) {
  // These used to be ignored (defaults taken) or, for "1x", read as group size 1.
  auto j = to_json(sample());
  auto bad = j;
  bad["triton"] = {1};
  expect_field_error(bad, "'triton' = [1]");
  bad = j;
  bad["flashinfer"] = 5;
  expect_field_error(bad, "'flashinfer' = 5");
  bad = j;
  bad["flashinfer"]["device"] = "h100";
  expect_field_error(bad, "'flashinfer.device'");
  for (const char* key : {"1x", "01", "4 ", "-4", "99999999999999999999"}) {
    bad = j;
    bad["flashinfer"]["device"]["blocks_per_sm"][key] = 2;
    expect_field_error(bad, "'flashinfer.device.blocks_per_sm' = \"" + std::string(key) + "\"");
  }
}

}  // namespace
}  // namespace headroom
