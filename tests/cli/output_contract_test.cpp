// The output writer against hostile folders: links planted at the temporary's name, writes that
// fail after the work (file-size limit, empty name), outputs that name an input or a special file.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <sys/stat.h>

#include "tests/cli/cli_run.hpp"

namespace {

using namespace headroom_test;

const std::string llama = source_path("configs/llama-3-8b.json");
const std::string laguna = source_path("configs/laguna-xs2.json");
const std::string stored_case = source_path("regressions/triton-index-overflow.json");

std::string in(const fs::path& dir) { return "cd '" + dir.string() + "' &&"; }

void expect_refused(const cli_result& r, const std::string& piece) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find(piece), std::string::npos) << r.err;
}

TEST(OutputContract, LinkPlantedAtTheTemporaryNameIsNeverFollowed) {
  // The temporary used to be OUT.tmp.PID, opened with O_TRUNC: a link planted at that name (the
  // shell's pid is the command's after exec) had its target overwritten by the report.
  const auto dir = scratch("d3");
  std::ofstream(dir / "victim.txt") << "precious";
  for (const std::string& cmd : {"check " + llama, "replay " + stored_case}) {
    const auto r = run_cli(cmd + " --json out.json",
                           in(dir) + " rm -f out.json* && ln -s victim.txt out.json.tmp.$$ && exec");
    EXPECT_LE(r.code, 1) << cmd << ": " << r.err;
    EXPECT_EQ(slurp(dir / "victim.txt"), "precious") << cmd;
    EXPECT_NE(slurp(dir / "out.json").find("\"violations\""), std::string::npos) << cmd;
  }
  // fuzz --out: a link at every counterexample's old temporary name.
  const std::string campaign = "fuzz --seed 14 --cases 60 --policy model-wide --out found";
  ASSERT_EQ(run_cli(campaign, in(dir)).code, 1);
  std::string plant;
  for (const auto& e : fs::directory_iterator(dir / "found")) {
    plant += " ln -s ../victim.txt found/" + e.path().filename().string() + ".tmp.$$ &&";
    fs::remove(e.path());
  }
  ASSERT_EQ(run_cli(campaign, in(dir) + plant + " exec").code, 1);
  EXPECT_EQ(slurp(dir / "victim.txt"), "precious") << "fuzz --out";
}

TEST(OutputContract, FailedWriteLeavesNothingOnStdout) {
  const auto dir = scratch("d4");
  // A file-size limit far below the report: the write fails after the work is done.
  auto r = run_cli("check " + laguna + " --policy model-wide --json out.json", in(dir) + " ulimit -f 2 &&");
  expect_refused(r, "out.json");
  EXPECT_TRUE(fs::is_empty(dir)) << "no partial file, no temporary";
  expect_refused(run_cli("check " + llama + " --json ''", in(dir)), "--json");
  expect_refused(run_cli("replay " + stored_case + " --json ''", in(dir)), "--json");
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(OutputContract, FullDiskLeavesNothingOnStdout) {
  // The reproduction: a 64 KiB tmpfs as the output folder, mounted in a private mount
  // namespace that ends with the command (skipped where that is not allowed).
  const auto dir = scratch("d4_tmpfs");
  const std::string mount = "unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs " + dir.string();
  if (std::system((mount + "' 2>/dev/null").c_str()) != 0) GTEST_SKIP() << "cannot mount a tmpfs";
  const auto r = run_cli("check " + laguna +
                             " --tp 1,2,4,8 --backend all --policy model-wide "
                             "--json out.json",
                         mount + " && cd " + dir.string() + " && exec \"$0\" \"$@\"'");
  expect_refused(r, "No space left on device");
}

TEST(OutputContract, OutputThatIsAnInputIsRefused) {
  const auto dir = scratch("d11");
  fs::copy_file(stored_case, dir / "c.json");
  fs::copy_file(llama, dir / "cfg.json");
  const std::string before = slurp(dir / "c.json");
  fs::create_hard_link(dir / "c.json", dir / "hard.json");
  fs::create_symlink("c.json", dir / "soft.json");
  for (const char* out : {"c.json", "./c.json", "hard.json", "soft.json"}) {
    const auto r = run_cli(std::string("replay c.json --json ") + out, in(dir));
    expect_refused(r, "input file");
    EXPECT_EQ(slurp(dir / "c.json"), before) << out;
  }
  expect_refused(run_cli("check cfg.json --json " + (dir / "cfg.json").string(), in(dir)), "input file");
  EXPECT_EQ(slurp(dir / "cfg.json"), slurp(llama));
}

TEST(OutputContract, ExistingSpecialFileIsNotReplaced) {
  const auto dir = scratch("fifo_out");
  ASSERT_EQ(::mkfifo((dir / "out.json").c_str(), 0644), 0);
  expect_refused(run_cli("check " + llama + " --json out.json", in(dir)), "not a regular file");
  struct stat st {};
  ASSERT_EQ(::lstat((dir / "out.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

}  // namespace
