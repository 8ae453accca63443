// headroom fuzz against hostile settings and folders: threads that cannot start, a zero time
// budget, garbage and stale temporaries in --out, and byte-identical files for any --jobs.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "tests/cli/cli_run.hpp"

namespace {

using namespace headroom_test;

// --out's files: name -> content.
std::map<std::string, std::string> files_of(const fs::path& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::directory_iterator(dir)) m[e.path().filename().string()] = slurp(e.path());
  return m;
}

// Finds 4 counterexamples by case 37 (the run had --cases 300; the files are the same).
const std::string campaign = "fuzz --seed 14 --cases 60 --policy model-wide --target sim";

TEST(FuzzContract, ThreadsThatCannotStartAreOneLine) {
  // 1024 stacks of 8 MiB do not fit 1 GiB of address space: std::thread threw, terminate, SIGABRT.
  const auto r = run_cli("fuzz --jobs 1024 --cases 50 --target model", "ulimit -v 1048576 && exec");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("'--jobs' = 1024: only"), std::string::npos) << r.err;
}

TEST(FuzzContract, TimeBudgetRunsAtLeastOneCase) {
  auto r = run_cli("fuzz --time 0s");  // ran 0 cases and said clean
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("'--time' = 0s"), std::string::npos) << r.err;
  r = run_cli("fuzz --time 0.000001s --target model");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  1 cases in"), std::string::npos) << r.out;
}

TEST(FuzzContract, FilesInOutAreCheckedNotTrusted) {
  const auto ref = scratch("d12_ref");
  ASSERT_EQ(run_cli(campaign + " --out " + ref.string()).code, 1);
  const auto expected = files_of(ref);
  ASSERT_GE(expected.size(), 2u);
  const auto dir = scratch("d12");
  bool first = true;
  for (const auto& [name, text] : expected) {  // the first one genuine, the others garbage
    std::ofstream(dir / name) << (first ? text : "garbage");
    first = false;
  }
  const pid_t child = ::fork();  // a pid that ran and is gone
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const std::string dead = std::to_string(child), live = std::to_string(::getpid());
  for (const std::string& stale : {"a.json.tmp." + dead, "b.json.tmp." + dead + ".Xy12Zq"})
    std::ofstream(dir / stale) << "{";
  std::ofstream(dir / ("c.json.tmp." + live + ".Xy12Zq")) << "{";  // a running process's
  const auto r = run_cli(campaign + " --out " + dir.string());
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("(file from an earlier campaign)"), std::string::npos) << r.out;
  auto got = files_of(dir);
  EXPECT_EQ(got.erase("c.json.tmp." + live + ".Xy12Zq"), 1u);
  EXPECT_EQ(got, expected) << "garbage replaced, stale temporaries removed";
}

TEST(FuzzContract, FilesAreTheSameForAnyJobs) {
  // The note named the case its job happened to shrink first; --jobs 4 differed on every run.
  const auto one = scratch("d13_1");
  ASSERT_EQ(run_cli(campaign + " --jobs 1 --out " + one.string()).code, 1);
  const auto expected = files_of(one);
  for (const char* jobs : {"2", "2", "4"}) {
    const auto dir = scratch(std::string("d13_") + jobs);
    ASSERT_EQ(run_cli(campaign + " --jobs " + jobs + " --out " + dir.string()).code, 1);
    EXPECT_EQ(files_of(dir), expected) << "--jobs " << jobs;
  }
}

}  // namespace
