// FlashInfer planners (docs/engines.md §6, 6).
#include <gtest/gtest.h>

#include "core/backends/flashinfer.hpp"

namespace headroom {
namespace {

rank_layer full_layer(int64_t h, int64_t kv, int64_t d) { return {"l", attn_kind::full, h, kv, d, d, 0}; }

TEST(FiDecode, SpecExampleOverflowsTmpSBy16KiB) {
  // H_b 32, kv 4: 64 requests of 16 pages split into 2 chunks each: NB = P = 128.
  auto p = plan_fi_decode(32, 4, 128, dtype::bf16, decode_batch(64, 256), flashinfer_options{});
  ASSERT_TRUE(p.split);
  EXPECT_EQ(p.chunk_pages, 8);
  EXPECT_EQ(p.num_work, 128);
  EXPECT_EQ(p.padded, 128);
  EXPECT_EQ(p.o_indptr.back(), 128);
  auto need = fi_decode_needs(p, full_layer(64, 4, 128), dtype::bf16);
  const auto* tmp_s = find_buffer(p.buffers, "tmp_s");
  const auto* tmp_v = find_buffer(p.buffers, "tmp_v");
  EXPECT_EQ(need[1].bytes() - tmp_s->capacity_bytes, 16 * 1024);
  EXPECT_EQ(need[0].bytes(), tmp_v->capacity_bytes);  // bf16 tmp_v overflows only past 2 x H_b
  EXPECT_GT(fi_decode_needs(p, full_layer(72, 4, 128), dtype::bf16)[0].bytes(), tmp_v->capacity_bytes);
}

TEST(FiDecode, NoSplitWhenTheGridIsFull) {
  flashinfer_options o;
  auto p = plan_fi_decode(64, 8, 128, dtype::bf16, decode_batch(200, 4096), o);  // 200*8 >= 1056
  EXPECT_FALSE(p.split);
  EXPECT_TRUE(p.buffers.empty());
  EXPECT_TRUE(fi_decode_needs(p, full_layer(96, 8, 128), dtype::bf16).empty());
}

TEST(FiDecode, ShortSequencesDoNotSplitWithoutGraphs) {
  auto p = plan_fi_decode(32, 8, 128, dtype::bf16, decode_batch(4, 64), flashinfer_options{});
  EXPECT_FALSE(p.split);
  flashinfer_options g;
  g.cuda_graph = true;
  auto q = plan_fi_decode(32, 8, 128, dtype::bf16, decode_batch(4, 64), g);
  EXPECT_TRUE(q.split);
  EXPECT_EQ(q.padded, q.max_grid / 8);
  EXPECT_EQ(static_cast<int64_t>(q.request_indices.size()), q.padded);
  EXPECT_LE(q.num_work, q.padded);
  EXPECT_EQ(q.request_indices[q.num_work], fi_unwritten);  // the padded tail is never written
}

TEST(FiDecode, ChunksKeepTheGridWithinMaxGrid) {
  batch b{{100, 5000, 17, 3000}, {1, 1, 1, 1}};
  auto p = plan_fi_decode(32, 8, 128, dtype::bf16, b, flashinfer_options{});
  ASSERT_TRUE(p.split);
  EXPECT_LE(p.num_work * 8, p.max_grid);
  EXPECT_GE(p.chunk_pages, 8);
  int64_t items = 0;
  for (std::size_t i = 0; i < 4; ++i) items += p.o_indptr[i + 1] - p.o_indptr[i];
  EXPECT_EQ(items, p.num_work);
}

// One 32768-token request, 64 qo / 8 kv heads on the H200 (FlashInfer's decode kernel measured at
// 9 blocks per SM at G 8, D 128; 132 SMs: max_grid 1188). By hand: 2048 pages; the smallest chunk
// c >= 8 pages with ceil(2048 / c) * 8 <= 1188, i.e. ceil(2048 / c) <= 148, is 14
// (ceil(2048 / 13) = 158), so 147 work items. Without the kv-head factor in the search the chunk
// would be the minimum, 8 (256 items, 2048 blocks).
TEST(FiDecode, ChunkSearchCountsEveryKvHead) {
  auto p = plan_fi_decode(64, 8, 128, dtype::bf16, decode_batch(1, 32768), flashinfer_options{});
  EXPECT_EQ(p.max_grid, 1188);
  ASSERT_TRUE(p.split);
  EXPECT_EQ(p.chunk_pages, 14);
  EXPECT_EQ(p.num_work, 147);
  EXPECT_EQ(p.padded, 147);
  // 16 requests of 4096 tokens: 256 pages each; ceil(256 / c) * 16 * 8 <= 1188 needs
  // ceil(256 / c) <= 9, c >= 29 (ceil(256 / 28) = 10): 9 chunks per request, 144 items.
  auto q = plan_fi_decode(64, 8, 128, dtype::bf16, decode_batch(16, 4096), flashinfer_options{});
  EXPECT_EQ(q.chunk_pages, 29);
  EXPECT_EQ(q.num_work, 144);
}

TEST(FiDecode, UnsupportedGroupSizeIsFlagged) {
  auto p = plan_fi_decode(40, 8, 128, dtype::bf16, decode_batch(1, 64), flashinfer_options{});
  EXPECT_FALSE(p.group_size_supported);  // G = 5
}

TEST(FiPrefill, MoreHeadsThanPlannedLeaveRowsUncomputed) {
  batch b{{512}, {512}};
  auto p = plan_fi_prefill(48, 8, 128, b, flashinfer_options{});  // G_b 6
  EXPECT_EQ(p.cta_tile_q, 128);
  EXPECT_EQ(p.qo_tiles[0], 512 * 6 / 128);
  auto same = fi_prefill_needs(p, full_layer(48, 8, 128), b);
  EXPECT_EQ(same.rows_never_computed, 0);
  auto more = fi_prefill_needs(p, full_layer(64, 8, 128), b);  // G_l 8: 1024 packed rows unplanned
  EXPECT_EQ(more.rows_never_computed, (512 * 8 - 24 * 128) * 8);
}

// A split plan for 1 head run with 5: query 4 tokens, so 4 packed rows planned in one 16-row tile
// and 20 run; packed rows 16-19 (query 3, heads 1-4) are in no tile. Their partial states would be
// rows 3C .. 4C - 1 of tmp_s (C chunks a row), entries (4C - 1) * 5 + h past its 16C entries: no
// target can see them unwritten, so they count only once tmp_s is large enough to hold them.
TEST(FiPrefill, UncoveredSplitRowsCountWhereTheirStatesAreInsideTmpS) {
  batch b{{129}, {4}};  // seq 129 (9 pages of 16), query 4
  auto p = plan_fi_prefill(1, 1, 1, b, flashinfer_options{});
  ASSERT_TRUE(p.split_kv);
  ASSERT_EQ(p.cta_tile_q, 16);
  const int64_t C = p.kv_chunks[0];
  buffer_plan* s = nullptr;
  for (auto& bp : p.buffers) s = bp.name == "tmp_s" ? &bp : s;
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->capacity_elems(), 16 * C);  // 1 head x C work items x 16 rows
  EXPECT_EQ(fi_prefill_needs(p, full_layer(5, 1, 1), b).rows_never_computed, 0);
  s->capacity_bytes = 4 * (4 * C * 5);  // every partial row of the 5-head run inside
  EXPECT_EQ(fi_prefill_needs(p, full_layer(5, 1, 1), b).rows_never_computed, 4);
  p.split_kv = false;  // not split: the output rows, always inside
  EXPECT_EQ(fi_prefill_needs(p, full_layer(5, 1, 1), b).rows_never_computed, 4);
}

// FlashInfer's FA2DetermineCtaTileQ gives 128-row tiles only below head size 256: at 256 a
// packed length above 64 takes 64-row tiles.
TEST(FiPrefill, TileHeightAtHeadSize256Is64) {
  batch b{{512}, {512}};
  EXPECT_EQ(plan_fi_prefill(8, 8, 128, b, flashinfer_options{}).cta_tile_q, 128);
  EXPECT_EQ(plan_fi_prefill(8, 8, 256, b, flashinfer_options{}).cta_tile_q, 64);
  EXPECT_EQ(plan_fi_prefill(8, 8, 256, b, flashinfer_options{}).qo_tiles[0], 8);
}

TEST(FiPrefill, ScratchIsOversizedByAboutTheGroup) {
  batch b{{4096, 4096}, {64, 64}};
  auto p = plan_fi_prefill(32, 4, 128, b, flashinfer_options{});
  ASSERT_TRUE(p.split_kv);
  auto run = fi_prefill_needs(p, full_layer(32, 4, 128), b);
  const auto* v = find_buffer(p.buffers, "tmp_v");
  EXPECT_GE(v->capacity_bytes, 8 * run.needs[0].bytes() / 2);
}

// The bytes FlashInfer's AlignedAllocator takes of the workspaces, by hand (16-byte alignment but
// for the kv chunk size's 1).
TEST(FiWorkspace, IntAndFloatPartsByHand) {
  fi_decode_plan d;
  d.padded = 100;  // request_indices 0-400, kv_tile_indices 400-800, o_indptr 800-1204, chunk 1204-1208
  EXPECT_EQ(fi_int_workspace_bytes(d), 1208);
  d.padded = 99, d.split = true;  // 0-396, 400-796, 800-1200, 1200-1204, block_valid_mask 1216-1315
  EXPECT_EQ(fi_int_workspace_bytes(d), 1315);
  fi_prefill_plan p;
  p.padded_batch_size = 10, p.batch_size = 3, p.total_num_rows = 50;
  // request / qo tile / kv tile indices 0-40, 48-88, 96-136; o_indptr 144-160; chunk 160-164
  EXPECT_EQ(fi_int_workspace_bytes(p), 164);
  p.cuda_graph = true, p.split_kv = true;  // total_num_rows 176-180, merge_indptr 192-396, mask 400-410
  EXPECT_EQ(fi_int_workspace_bytes(p), 410);
  EXPECT_EQ(fi_float_workspace_bytes({{"tmp_v", 1000, 2}, {"tmp_s", 24, 4}}), 1032);  // 0-1000, 1008-1032
  EXPECT_EQ(fi_float_workspace_bytes({}), 0);                                         // no split: no parts
}

}  // namespace
}  // namespace headroom
