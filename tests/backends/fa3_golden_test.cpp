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

namespace headroom {
namespace {

struct golden_row {
  std::string tree, text;
  fa3_call c;
  int64_t batch = 0, splits_passed = 0;
  int64_t causal = 0, local = 0, block_m = 0, block_n = 0, num_splits = 0, head_swizzle = 0, entries = 0;
};

std::vector<golden_row> read_golden(const std::string& path) {
  std::ifstream in(path);
  std::vector<golden_row> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    golden_row r;
    int64_t e4m3 = 0;
    f >> r.tree >> r.batch >> r.c.q_heads >> r.c.kv_heads >> r.c.head_size >> r.c.page_size >> r.c.window >>
        r.c.max_query_len >> r.c.max_seq_len >> r.splits_passed >> e4m3 >> r.causal >> r.local >> r.block_m >>
        r.block_n >> r.num_splits >> r.head_swizzle >> r.entries;
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
    const fa3_mask mask = fa3_mask_of(r.c);
    const fa3_tile tile = fa3_call_tile(r.c);
    const int64_t splits = r.splits_passed > 0 ? r.splits_passed : fa3_heuristic_splits(r.c);
    const bool swizzle = fa3_head_swizzle(r.c.max_query_len, r.c.max_seq_len, r.c.head_size, r.c.window);
    const fa3_layout layout = r.c.build == fa3_build::upstream
                                  ? fa3_upstream_layout_of(r.batch, mask.local, swizzle)
                                  : fa3_layout_of(r.batch, splits, swizzle);
    fork += r.c.build == fa3_build::vllm_fork;
    EXPECT_EQ(mask.causal, r.causal != 0) << r.text;
    EXPECT_EQ(mask.local, r.local != 0) << r.text;
    EXPECT_EQ(tile.m, r.block_m) << r.text;
    EXPECT_EQ(tile.n, r.block_n) << r.text;
    EXPECT_EQ(splits, r.num_splits) << r.text;
    EXPECT_EQ(swizzle, r.head_swizzle != 0) << r.text;
    EXPECT_EQ(layout.size(), r.entries) << r.text;
  }
  EXPECT_EQ(fork, 1000);
}

}  // namespace
}  // namespace headroom
