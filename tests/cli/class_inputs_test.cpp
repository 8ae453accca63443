// The C2 / C9 / C11 features from the command line: the bundled Gemma 4 and hybrid configs under
// their mutants (exit 1) and without (exit 0), and bad class settings in a case file (exit 2, one
// line naming the file and the field).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.hpp"

namespace {

using namespace headroom_test;

std::string config(const std::string& name) { return source_path("configs/" + name); }

TEST(ClassInputs, MutantsFailAndTheFixPasses) {
  const std::string gemma = "check " + config("gemma4-26b-a4b-per-layer.json") + " --backend triton --tp 1";
  EXPECT_EQ(run_cli(gemma).code, 0);
  const auto r = run_cli(gemma + " --mutant triton-model-head-size");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("VIOLATION buffer_capacity [C2]"), std::string::npos) << r.out;
  const std::string laguna = "check " + config("laguna-xs2.json") + " --backend triton --tp 8 --head-tile 16";
  EXPECT_EQ(run_cli(laguna).code, 0);
  const auto p = run_cli(laguna + " --mutant head-pad-divisors-only");  // 6 and 8 heads per rank
  EXPECT_EQ(p.code, 1);
  EXPECT_NE(p.out.find("mla_q_padded"), std::string::npos) << p.out;
  const std::string hybrid = "check " + config("hybrid-linear-example.json") +
                             " --backend triton --tp 1 --max-model-len 262144 --mamba-block-size 1152"
                             " --extra-group-block-size 16";
  EXPECT_EQ(run_cli(hybrid).code, 0);
  const auto h = run_cli(hybrid + " --mutant mamba-index-min-block-size");
  EXPECT_EQ(h.code, 1);
  EXPECT_NE(h.out.find("C11 num_computed_tokens          17"), std::string::npos) << h.out;
}

TEST(ClassInputs, BadSettingsInACaseFileNameTheField) {
  const auto dir = scratch("class_inputs");
  const auto good =
      nlohmann::json::parse(slurp(source_path("regressions/glm-mamba-index-min-block-size-past-row.json")));
  for (const char* field : {"head_tile", "mamba_block_size", "extra_group_block_size"}) {
    nlohmann::json c = good;
    c["engine"][field] = -3;
    const fs::path f = dir / (std::string(field) + ".json");
    std::ofstream(f) << c.dump();
    const auto r = run_cli("replay " + f.string());
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find(f.filename().string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(std::string("'engine.") + field + "' = -3"), std::string::npos) << r.err;
  }
}

}  // namespace
