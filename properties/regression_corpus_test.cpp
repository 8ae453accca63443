// The regression corpus (regressions/*.json, docs/design.md "replayed first"): every stored
// counterexample is replayed on each target its "expect" names (model, sim; gpu is the GPU
// lane's) and must report exactly the expected invariants. The folder is the first argument, the
// project's regressions/ by default.
#include <algorithm>
#include <filesystem>

#include "core/check/check.hpp"
#include "generators/corpus.hpp"
#include "properties/support/engine_view.hpp"
#include "properties/support/prop_check.hpp"

namespace headroom {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> corpus_files() {
  const auto& args = props::current().args;
  const fs::path dir = args.empty() ? fs::path(HEADROOM_REGRESSIONS_DIR) : fs::path(args.front());
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::unique_ptr<executor> executor_for(const std::string& target) {
  if (target == "model") return std::make_unique<model_executor>();
  if (target == "sim") return props::make_sim();
  return nullptr;  // gpu: replayed by the GPU lane
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return "[" + s + "]";
}

TEST(RegressionCorpus, EveryFileReproducesItsExpectedVerdict) {
  const auto files = corpus_files();
  ASSERT_FALSE(files.empty()) << "no counterexample files found";
  int replays = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    const generators::corpus_entry e = generators::load_corpus_entry(f.string());
    EXPECT_FALSE(e.expect.empty()) << "no expectation stored";
    for (const auto& [target, expected] : e.expect) {
      auto ex = executor_for(target);
      if (!ex) continue;
      const report r = run_case(e.c, *ex, e.tight);
      const auto got = generators::invariants_of(r);
      EXPECT_EQ(got, expected) << f.filename().string() << " on " << target << ": expected "
                               << joined(expected) << ", got " << joined(got);
      EXPECT_EQ(r.ok, expected.empty());
      ++replays;
      std::cout << f.filename().string() << " [" << target << "] " << joined(got) << "\n";
    }
  }
  EXPECT_GT(replays, 0);
}

}  // namespace
}  // namespace headroom
