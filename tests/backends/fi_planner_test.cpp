// FlashInfer planner mirror (docs/engines.md §6, §7): expectations worked by hand from FlashInfer's
// formulas (scheduler.cuh: PrefillSplitQOKVIndptr, DecodePlanImpl; FA2DetermineCtaTileQ).
#include <gtest/gtest.h>

#include "core/backends/flashinfer.hpp"
#include "core/check/classes/classes.hpp"

namespace headroom {
namespace {

flashinfer_options graph_no_split(int64_t sms, bool exact, int64_t uniform) {
  flashinfer_options o;
  o.device.num_sms = sms;
  o.cuda_graph = true;
  o.disable_split_kv = true;
  o.exact_no_split_graph_grid = exact;
  o.uniform_q_len = uniform;
  return o;
}

// One request, q 512, kv 4096, 8 qo / 8 kv heads, D 128, page 16. Packed 512 > 64: T_q 128, 4 tiles.
// Budget 2 * 132 / 8 = 33. 256 pages, chunk >= 8: 4 * ceil(256 / c) <= 33 needs ceil <= 8: c = 32
// (c = 31 gives 9). Split (32 < 256): 4 x 8 = 32 entries; chunk 32 * 16 = 512 tokens.
TEST(FiPlanner, PrefillChunkSearchInPagesAgainstTwoBlocksPerSm) {
  const auto p = plan_fi_prefill(8, 8, 128, batch{{4096}, {512}}, flashinfer_options{});
  EXPECT_EQ(p.cta_tile_q, 128);
  ASSERT_TRUE(p.split_kv);
  EXPECT_EQ(p.kv_chunk_size, 512);
  EXPECT_EQ(p.new_batch_size, 32);
  EXPECT_EQ(p.padded_batch_size, 32);
  EXPECT_EQ(p.request_indices[31], 0);
  EXPECT_EQ(p.qo_tile_indices[31], 3);
  EXPECT_EQ(p.kv_tile_indices[31], 7);
  EXPECT_EQ(p.o_indptr, (std::vector<int32_t>{0, 512 * 8}));
  ASSERT_EQ(p.merge_indptr.size(), 513u);
  EXPECT_EQ(p.merge_indptr.back(), 4096);
  EXPECT_EQ(p.block_valid_mask, std::vector<uint8_t>(32, 1));
  EXPECT_EQ(find_buffer(p.buffers, "tmp_v")->capacity_bytes, 8LL * 32 * 128 * 128 * 4);  // 16 MiB
}

// disable_split_kv: the chunk is INT64_MAX pages; times 16 it wraps, and the int32 slot keeps
// (2^63 - 1) * 16 mod 2^32 = 2^32 - 16: -16. No merge_indptr, no mask.
TEST(FiPlanner, DisabledSplitStoresTheWrappedChunk) {
  flashinfer_options o;
  o.disable_split_kv = true;
  const auto p = plan_fi_prefill(8, 8, 128, batch{{4096}, {512}}, o);
  EXPECT_FALSE(p.split_kv);
  EXPECT_EQ(p.kv_chunk_size, -16);
  EXPECT_EQ(p.new_batch_size, 4);
  EXPECT_TRUE(p.merge_indptr.empty());
  EXPECT_TRUE(p.block_valid_mask.empty());
}

// A window: q 1 (packed 1 with G 1, T_q 16), window_left 100, page 16: ceil((100 + 16) / 16) = 8
// pages of the 256 count. Budget 2 * 132 / 1 = 264 >= 1 tile: the search ends at the minimum, 8
// pages (8 = the effective length: not split); kv_chunk_size 8 * 16 = 128.
TEST(FiPlanner, WindowBoundsTheEffectiveKv) {
  flashinfer_options o;
  o.window_left = 100;
  const auto p = plan_fi_prefill(1, 1, 128, batch{{4096}, {1}}, o);
  EXPECT_EQ(p.cta_tile_q, 16);
  EXPECT_FALSE(p.split_kv);
  EXPECT_EQ(p.kv_chunk_size, 128);
}

// Catalogue C10, H100 (132 SMs): B 2 one-token decode requests, 16 qo / 2 kv heads. Ragged graph
// tiles: max row 2 - 2 + 1 = 1, packed 8: T_q 16, tiles ceil(2 * 8 / 16) + 1 = 2; budget
// 2 * 132 / 2 = 132. Upstream: grid max(132, 2) = 132 over 2 written entries, no mask. Fixed: 2.
TEST(FiPlanner, C10GraphGridPastTheWrittenEntriesH100) {
  const batch b = decode_batch(2, 1024);
  const auto bug = plan_fi_prefill(16, 2, 128, b, graph_no_split(132, false, 0));
  EXPECT_EQ(bug.padded_batch_size, 132);
  EXPECT_EQ(bug.new_batch_size, 2);
  EXPECT_EQ(bug.request_indices[2], fi_unwritten);
  EXPECT_EQ(fi_unmasked_tail(bug), 130);
  const auto fixed = plan_fi_prefill(16, 2, 128, b, graph_no_split(132, true, 1));
  EXPECT_EQ(fixed.padded_batch_size, 2);
  EXPECT_EQ(fi_unmasked_tail(fixed), 0);
}

// H200 (132 SMs), 4 requests, 32 qo / 8 kv heads (G 4): tiles ceil(4 * 4 / 16) + 3 = 4, budget
// 264 / 8 = 33: grid 33 over 4 entries (29 unmasked); fixed: 4 * ceil(4 / 16) = 4.
TEST(FiPlanner, C10GraphGridPastTheWrittenEntriesH200) {
  const batch b = decode_batch(4, 300);
  const auto bug = plan_fi_prefill(32, 8, 128, b, graph_no_split(132, false, 0));
  EXPECT_EQ(bug.padded_batch_size, 33);
  EXPECT_EQ(fi_unmasked_tail(bug), 29);
  EXPECT_EQ(plan_fi_prefill(32, 8, 128, b, graph_no_split(132, true, 1)).padded_batch_size, 4);
}

// Decode under graphs, 4 requests of 64 tokens (4 pages), 32 qo / 8 kv heads, 8 blocks per SM:
// max_grid 1056, 4 * 8 < 1056: search from 8 pages >= the 4 pages: chunk 8, 4 entries, split
// (graph). Padded 1056 / 8 = 132: entries 4..131 unwritten, mask 4 ones then zeros; chunk 128.
TEST(FiPlanner, DecodeGraphTailUnwrittenAndMasked) {
  flashinfer_options o;
  o.cuda_graph = true;
  const auto p = plan_fi_decode(32, 8, 128, dtype::bf16, decode_batch(4, 64), o);
  ASSERT_TRUE(p.split);
  EXPECT_EQ(p.kv_chunk_size, 128);
  EXPECT_EQ(p.num_work, 4);
  EXPECT_EQ(p.padded, 132);
  EXPECT_EQ(p.request_indices[3], 3);
  EXPECT_EQ(p.request_indices[4], fi_unwritten);
  EXPECT_EQ(p.kv_tile_indices[131], fi_unwritten);
  ASSERT_EQ(p.block_valid_mask.size(), 132u);
  EXPECT_EQ(p.block_valid_mask[3], 1);
  EXPECT_EQ(p.block_valid_mask[4], 0);
  EXPECT_EQ(p.o_indptr, (std::vector<int32_t>{0, 1, 2, 3, 4}));
}

// DecodePlanImpl and BatchDecodeWithPagedKVCacheWorkEstimationDispatched (scheduler.cuh, fb28d72)
// take no window: the work estimation sees kv_indptr (all pages) and the plan's only inputs are
// the indptr, B, num_qo_heads, page_size and enable_cuda_graph. 2 requests of 65536 tokens (4096
// pages), 32 qo / 8 kv heads (G 4, D 128: 8 blocks per SM on the H200): max_grid 8 * 132 = 1056,
// 2 * 8 < 1056, so the search from 8 pages: 2 * ceil(4096 / c) * 8 <= 1056 needs ceil <= 66:
// c = 63 (4096 / 63 = 65.02 -> 66; c = 62 gives 67). 132 entries, split, padded 132 (no graph);
// chunk 63 * 16 = 1008 tokens; tmp_v 4 * 32 * 132 * 128 = 2,162,688 bytes, tmp_s 4 * 32 * 132.
// A window of 1024 (window_left 1023, vLLM's sliding_window - 1) changes none of it.
TEST(FiPlanner, DecodePlanIgnoresTheWindow) {
  const batch b{{65536, 65536}, {1, 1}};
  for (int64_t window_left : {-1, 1023, 0}) {
    SCOPED_TRACE(window_left);
    flashinfer_options o;
    o.window_left = window_left;
    const auto p = plan_fi_decode(32, 8, 128, dtype::bf16, b, o);
    EXPECT_EQ(p.max_grid, 1056);
    ASSERT_TRUE(p.split);
    EXPECT_EQ(p.chunk_pages, 63);
    EXPECT_EQ(p.kv_chunk_size, 1008);
    EXPECT_EQ(p.num_work, 132);
    EXPECT_EQ(p.padded, 132);
    EXPECT_EQ(p.o_indptr, (std::vector<int32_t>{0, 66, 132}));
    ASSERT_EQ(p.kv_tile_indices.size(), 132u);
    EXPECT_EQ(p.kv_tile_indices[65], 65);
    EXPECT_EQ(find_buffer(p.buffers, "tmp_v")->capacity_bytes, 4LL * 32 * 132 * 128);
    EXPECT_EQ(find_buffer(p.buffers, "tmp_s")->capacity_bytes, 4LL * 32 * 132);
  }
}

// POD attention (PrefillPlanImpl, fb28d72): max_grid = max(0, 2 * SMs - num_colocated_ctas), and
// max_batch_size_if_split = max_grid / KV is both the chunk search's budget and the CUDA-graph grid's
// floor in PrefillSplitQOKVIndptr. One request q 512, kv 4096 (256 pages), 8 / 8 heads, D 128: T_q
// 128, 4 tiles. 136 colocated CTAs: max_grid 264 - 136 = 128, budget 16 (33 without): 4 * ceil(256
// / c) <= 16 needs c >= 64: chunk 64 pages = 1024 tokens, 16 entries (32 without), split; tmp_v
// 4 * 8 * 16 * 128 * 128 = 8 MiB (16 MiB without), tmp_s 4 * 8 * 16 * 128.
TEST(FiPlanner, ColocatedCtasShrinkThePrefillBudget) {
  flashinfer_options o;
  o.num_colocated_ctas = 136;
  const auto p = plan_fi_prefill(8, 8, 128, batch{{4096}, {512}}, o);
  EXPECT_EQ(p.cta_tile_q, 128);
  ASSERT_TRUE(p.split_kv);
  EXPECT_EQ(p.kv_chunk_size, 1024);
  EXPECT_EQ(p.new_batch_size, 16);
  EXPECT_EQ(p.padded_batch_size, 16);
  EXPECT_EQ(p.o_indptr, (std::vector<int32_t>{0, 512 * 4}));
  EXPECT_EQ(p.merge_indptr.back(), 512 * 4);
  EXPECT_EQ(find_buffer(p.buffers, "tmp_v")->capacity_bytes, 4LL * 8 * 16 * 128 * 128);
  EXPECT_EQ(find_buffer(p.buffers, "tmp_s")->capacity_bytes, 4LL * 8 * 16 * 128);
}

// The same under CUDA graphs with kv 1024 (64 pages): tiles ceil(512 / 128) + 1 - 1 = 4. Without
// colocated CTAs: budget 33, 4 * ceil(64 / c) <= 33 at the minimum c = 8: 32 entries in a grid of
// max(33, 4) = 33. With 200: max_grid 64, budget 8: ceil(64 / c) <= 2: c = 32 pages (512 tokens),
// 8 entries, grid max(8, 4) = 8; tmp_v 4 * 8 * 8 * 128 * 128 = 4 MiB (33 rows of tiles without).
TEST(FiPlanner, ColocatedCtasShrinkTheGraphGrid) {
  flashinfer_options o;
  o.cuda_graph = true;
  const batch b{{1024}, {512}};
  const auto plain = plan_fi_prefill(8, 8, 128, b, o);
  EXPECT_EQ(plain.kv_chunk_size, 128);
  EXPECT_EQ(plain.new_batch_size, 32);
  EXPECT_EQ(plain.padded_batch_size, 33);
  o.num_colocated_ctas = 200;
  const auto pod = plan_fi_prefill(8, 8, 128, b, o);
  ASSERT_TRUE(pod.split_kv);
  EXPECT_EQ(pod.kv_chunk_size, 512);
  EXPECT_EQ(pod.new_batch_size, 8);
  EXPECT_EQ(pod.padded_batch_size, 8);
  EXPECT_EQ(pod.block_valid_mask, std::vector<uint8_t>(8, 1));
  EXPECT_EQ(find_buffer(pod.buffers, "tmp_v")->capacity_bytes, 4LL * 8 * 8 * 128 * 128);
}

// More colocated CTAs than 2 * SMs: max_grid clamps to 0, budget 0, every chunk size is over it and
// the search ends at the longest request (256 pages). Eager: split_kv = 256 < 256 = false, one chunk
// per tile (4 entries), kv_chunk_size 256 * 16 = 4096, no scratch. Graph: split_kv forced true,
// grid max(0, 4 tiles) = 4, all 4 entries valid.
TEST(FiPlanner, ColocatedCtasPastTheDeviceLeaveNoBudget) {
  flashinfer_options o;
  o.num_colocated_ctas = 300;
  const batch b{{4096}, {512}};
  const auto eager = plan_fi_prefill(8, 8, 128, b, o);
  EXPECT_FALSE(eager.split_kv);
  EXPECT_EQ(eager.kv_chunk_size, 4096);
  EXPECT_EQ(eager.new_batch_size, 4);
  EXPECT_EQ(eager.padded_batch_size, 4);
  EXPECT_TRUE(eager.buffers.empty());
  o.cuda_graph = true;
  const auto graph = plan_fi_prefill(8, 8, 128, b, o);
  ASSERT_TRUE(graph.split_kv);
  EXPECT_EQ(graph.kv_chunk_size, 4096);
  EXPECT_EQ(graph.padded_batch_size, 4);
  EXPECT_EQ(graph.block_valid_mask, std::vector<uint8_t>(4, 1));
  EXPECT_EQ(find_buffer(graph.buffers, "tmp_s")->capacity_bytes, 4LL * 8 * 4 * 128);
}

}  // namespace
}  // namespace headroom
