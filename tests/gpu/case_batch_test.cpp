// How a campaign batch gathers its cases' launches into groups (targets/gpu/launch/case_batch.hpp),
// without a device: which launches share a group, where each case's blocks and params sit in its
// group's entries, the launch order, and how a group's blocks map back to each case's own grid.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "core/util/bisect.hpp"
#include "targets/gpu/launch/case_batch.hpp"

namespace headroom::gpu {
namespace {

// Two launchers stand for two kernels (never called here).
void kernel_a(const std::byte*, int, int, int64_t, launch_dim, std::size_t, void*) {}
void kernel_b(const std::byte*, int, int, int64_t, launch_dim, std::size_t, void*) {}

struct params {  // 40 bytes: an entry is 32 + 40 = 72, 80 with the 16-byte alignment
  int64_t v[5];
};
params numbered(int64_t k) { return {{k, k + 1, k + 2, k + 3, k + 4}}; }

case_header header_at(const std::vector<std::byte>& e, std::size_t at) {
  case_header h;
  std::memcpy(&h, e.data() + at, sizeof(h));
  return h;
}
params params_at(const std::vector<std::byte>& e, std::size_t at) {
  params p;
  std::memcpy(&p, e.data() + at + case_params_at, sizeof(p));
  return p;
}

TEST(case_batch, same_kernel_step_and_block_share_a_group) {
  case_batch b;
  const params p0 = numbered(10), p1 = numbered(20);
  b.add(&kernel_a, 0, {3, 2, 1}, {128, 1, 1}, 100, &p0, sizeof(p0));
  b.add(&kernel_a, 0, {5, 1, 1}, {128, 1, 1}, 300, &p1, sizeof(p1));
  const auto groups = b.launch_order();
  ASSERT_EQ(groups.size(), 1u);
  const case_group& g = groups[0];
  EXPECT_EQ(g.n, 2);
  EXPECT_EQ(g.blocks, 11);  // 6 + 5
  EXPECT_EQ(g.stride, 80);  // 32 + 40, rounded up to 16
  EXPECT_EQ(g.smem, 300u);  // the most either case needs
  const auto e = b.entries();
  ASSERT_EQ(e.size(), 160u);
  EXPECT_EQ(header_at(e, 0).block0, 0);
  EXPECT_EQ(header_at(e, 80).block0, 6);
  EXPECT_EQ(header_at(e, 80).grid.x, 5);
  EXPECT_EQ(params_at(e, 0).v[4], 14);
  EXPECT_EQ(params_at(e, 80).v[0], 20);
}

TEST(case_batch, other_kernels_steps_and_blocks_start_groups_launched_by_step) {
  case_batch b;
  const params p = numbered(1);
  b.add(&kernel_a, 1, {1, 1, 1}, {64, 1, 1}, 0, &p, sizeof(p));  // group 0: step 1
  b.add(&kernel_a, 0, {1, 1, 1}, {64, 1, 1}, 0, &p, sizeof(p));  // group 1: another step
  b.add(&kernel_b, 0, {1, 1, 1}, {64, 1, 1}, 0, &p, sizeof(p));  // group 2: another kernel
  b.add(&kernel_a, 0, {1, 1, 1}, {32, 2, 1}, 0, &p, sizeof(p));  // group 3: another block
  b.add(&kernel_a, 0, {2, 1, 1}, {64, 1, 1}, 0, &p, sizeof(p));  // joins group 1
  const auto groups = b.launch_order();
  ASSERT_EQ(groups.size(), 4u);
  // Step 0 first, in the order the groups were begun; each group's entries where its `at` says.
  EXPECT_EQ(groups[0].step, 0);
  EXPECT_EQ(groups[0].launcher, &kernel_a);
  EXPECT_EQ(groups[0].n, 2);
  EXPECT_EQ(groups[0].at, 80u);  // after group 0's one entry
  EXPECT_EQ(groups[1].launcher, &kernel_b);
  EXPECT_EQ(groups[1].at, 240u);
  EXPECT_EQ(groups[2].block.y, 2);
  EXPECT_EQ(groups[2].at, 320u);
  EXPECT_EQ(groups[3].step, 1);
  EXPECT_EQ(groups[3].at, 0u);
  EXPECT_EQ(b.entries().size(), 400u);
  EXPECT_EQ(header_at(b.entries(), 80 + 80).block0, 1);  // group 1's second case after the first's block
}

TEST(case_batch, a_group_never_passes_cudas_grid_limit) {
  case_batch b;
  const params p = numbered(0);
  b.add(&kernel_a, 0, {max_grid_x - 1, 1, 1}, {32, 1, 1}, 0, &p, sizeof(p));
  b.add(&kernel_a, 0, {1, 1, 1}, {32, 1, 1}, 0, &p, sizeof(p));  // exactly at the limit: joins
  b.add(&kernel_a, 0, {1, 1, 1}, {32, 1, 1}, 0, &p, sizeof(p));  // one past: a new group
  const auto groups = b.launch_order();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].blocks, max_grid_x);
  EXPECT_EQ(groups[1].blocks, 1);
  EXPECT_THROW(b.add(&kernel_a, 0, {0, 1, 1}, {32, 1, 1}, 0, &p, sizeof(p)), std::invalid_argument);
  EXPECT_THROW(b.add(&kernel_a, 0, {65536, 65536, 1}, {32, 1, 1}, 0, &p, sizeof(p)), std::invalid_argument);
}

// What the device does with a group (case_launch.cuh's case_kernel): block b finds its case by
// bisection over the first blocks and its place in that case's grid. Every block of every case
// must come out exactly once.
TEST(case_batch, every_case_block_is_run_exactly_once) {
  case_batch b;
  const std::vector<launch_dim> grids = {{2, 3, 1}, {1, 1, 4}, {7, 1, 1}, {1, 1, 1}, {3, 2, 2}};
  for (std::size_t i = 0; i < grids.size(); ++i) {
    const params p = numbered(static_cast<int64_t>(i));
    b.add(&kernel_a, 0, grids[i], {32, 1, 1}, 0, &p, sizeof(p));
  }
  const case_group g = b.launch_order().at(0);
  const auto e = b.entries();
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, int> seen;
  for (int64_t block = 0; block < g.blocks; ++block) {
    const int c = last_at_or_below(
        g.n, block, [&](int i) { return header_at(e, static_cast<std::size_t>(i) * g.stride).block0; });
    const std::size_t at = static_cast<std::size_t>(c) * static_cast<std::size_t>(g.stride);
    const case_header h = header_at(e, at);
    const launch_dim x = block_of_case(block - h.block0, h.grid);
    ASSERT_EQ(params_at(e, at).v[0], c);
    ASSERT_TRUE(x.x < h.grid.x && x.y < h.grid.y && x.z < h.grid.z);
    ++seen[{c, x.x, x.y, x.z}];
  }
  int64_t expected = 0;
  for (const auto& gr : grids) expected += gr.count();
  EXPECT_EQ(static_cast<int64_t>(seen.size()), expected);
  for (const auto& [k, count] : seen) EXPECT_EQ(count, 1);
}

}  // namespace
}  // namespace headroom::gpu
