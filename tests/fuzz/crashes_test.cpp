// Every input that ever broke a fuzz target (fuzz/crashes/config, fuzz/crashes/case) replayed
// through the same properties (fuzz/fuzz_inputs.hpp): accepted, or refused with one bounded line.
// The plan target's seeds (fuzz/seeds/plan: plans of configs/ and hand-broken ones) too, so that
// the g++ build holds plan_input without clang.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "fuzz/fuzz_inputs.hpp"

namespace {

namespace fs = std::filesystem;

template <class Input>
int replay_all(const std::string& folder, Input&& input) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(std::string(HEADROOM_SOURCE_DIR) + "/fuzz/" + folder)) {
    if (e.path().filename() == "README.md") continue;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    EXPECT_NO_THROW(input(bytes)) << e.path();
    ++n;
  }
  return n;
}

TEST(fuzz_crashes, config_inputs_replay_clean) {
  EXPECT_GT(replay_all("crashes/config", headroom::fuzz::config_input), 0);
}

TEST(fuzz_crashes, case_inputs_replay_clean) {
  EXPECT_GT(replay_all("crashes/case", headroom::fuzz::case_input), 0);
}

TEST(fuzz_crashes, plan_seeds_replay_clean) {
  EXPECT_GT(replay_all("seeds/plan", headroom::fuzz::plan_input), 0);
}

}  // namespace
