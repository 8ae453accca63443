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

}  // namespace
}  // namespace headroom
