// headroom's FA3 mirror against the engines' numbers in every build: tests/backends/fa3_schedules.tsv
// holds, for 2,000 random calls, what FA3's own host rules and header code computed (1,000 through
// vLLM's fork at 617264c, 1,000 SGLang decode calls through Dao-AILab's tree at 0251105, both on SM90
// with 132 SMs), written by the comparisons that need the checkouts
// (tests/engine_target/fa3_schedule_test.cpp, fa3_upstream_schedule_test.cpp). Each row's call is
// planned by the mirror and must give FA3's mask, tile, split count, head swizzle and layout length.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/backends/fa3.hpp"
#include "tests/support/fa3_answer.hpp"

namespace headroom {
namespace {

struct golden_row {
  std::string tree, text;
  fa3_call c;
  int64_t batch = 0, splits_passed = 0;
  fa3_answer fa3;
};

std::vector<golden_row> read_golden(const std::string& path) {
  std::ifstream in(path);
  std::vector<golden_row> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    golden_row r;
    int64_t e4m3 = 0;
    f >> r.tree >> r.batch >> r.c.q_heads >> r.c.kv_heads >> r.c.head_size >> r.c.head_size_v >>
        r.c.page_size >> r.c.window >> r.c.max_query_len >> r.c.max_seq_len >> r.splits_passed >> e4m3 >>
        r.fa3.causal >> r.fa3.local >> r.fa3.block_m >> r.fa3.block_n >> r.fa3.num_splits >>
        r.fa3.head_swizzle >> r.fa3.entries;
    EXPECT_TRUE(f) << path << ": a malformed row: " << line;
    r.c.e4m3 = e4m3 != 0;
    r.c.build = r.tree == "upstream" ? fa3_build::upstream : fa3_build::vllm_fork;
    r.text = line;
    rows.push_back(r);
  }
  return rows;
}

TEST(Fa3Golden, MirrorGivesFa3sOwnSchedules) {
  const auto rows = read_golden(HEADROOM_FA3_GOLDEN);
  ASSERT_EQ(rows.size(), 2000u);
  int fork = 0;
  for (const golden_row& r : rows) {
    fork += r.c.build == fa3_build::vllm_fork;
    const auto mirror = fa3_fields(fa3_mirror_answer(r.c, r.batch, r.splits_passed)), fa3 = fa3_fields(r.fa3);
    for (std::size_t i = 0; i < mirror.size(); ++i)
      EXPECT_EQ(mirror[i].second, fa3[i].second) << mirror[i].first << ": " << r.text;
  }
  EXPECT_EQ(fork, 1000);
}

}  // namespace
}  // namespace headroom
