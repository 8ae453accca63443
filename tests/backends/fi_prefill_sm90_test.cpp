// FlashInfer's Hopper prefill planner mirror (fi_prefill_sm90.hpp): expectations worked by hand from
// PrefillSM90Plan, MinHeap and packed_causal_kv_end (scheduler.cuh, heap.h at fb28d72). The heap
// pops its front: of equal costs, the CTA std::pop_heap returns first.
#include <gtest/gtest.h>

#include "core/backends/fi_prefill_sm90.hpp"
#include "core/util/error.hpp"

namespace headroom {
namespace {

flashinfer_options sms(int64_t n) {
  flashinfer_options o;
  o.device.num_sms = n;
  return o;
}

// CUDA graphs on 132 SMs, the parts sized for `rows` query rows.
flashinfer_options graph_rows(int64_t rows) {
  flashinfer_options o = sms(132);
  o.cuda_graph = true;
  o.total_num_rows = rows;
  return o;
}

// kv {100, 300}, q {200, 50}, 2 SMs, D 128 (T_q 128), page 16, not causal. By kv: request 1 (1
// tile), then request 0 (tiles 1, 0). CTA 0 (front of the all-zero heap) takes request 1 (cost
// 256 + 300 = 556); CTA 1 tile 1 of request 0 (356); CTA 1 again (356 < 556) tile 0.
TEST(FiPrefillSm90, TilesDealtLongestKvFirstToTheCheapestCta) {
  const auto p = plan_fi_prefill_sm90(1, 1, 128, batch{{100, 300}, {200, 50}}, sms(2), false);
  EXPECT_EQ(p.cta_tile_q, 128);
  EXPECT_EQ(p.work_indptr, (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(p.qo_tile_indices, (std::vector<int32_t>{0, 1, 0}));
  EXPECT_EQ(p.batch_indices, (std::vector<int32_t>{1, 0, 0}));
  EXPECT_EQ(p.qo_indptr, (std::vector<int32_t>{200, 0, 0}));
  EXPECT_EQ(p.kv_indptr, (std::vector<int32_t>{7, 0, 0}));  // pages: ceil(100 / 16) = 7 before request 1
  EXPECT_EQ(p.qo_len, (std::vector<int32_t>{50, 200, 200}));
  EXPECT_EQ(p.kv_len, (std::vector<int32_t>{300, 100, 100}));
  EXPECT_EQ(p.head_indices, (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(p.allocated_works, 3);  // no graph: the works written
}

// One request, kv 1000, q 384: tiles 2, 1, 0 on 2 SMs. Not causal, every tile costs 256 + 1000:
// CTA 0 tile 2, CTA 1 tile 1, then the tie 1256 / 1256 pops CTA 0 (front). Causal, the tiles read
// 1000 (last), 1000 - 384 + 256 = 872 and 1000 - 384 + 128 = 744: CTA 1 (1128) takes tile 0.
TEST(FiPrefillSm90, CausalCostsChangeTheDeal) {
  const batch b{{1000}, {384}};
  const auto flat = plan_fi_prefill_sm90(1, 1, 128, b, sms(2), false);
  EXPECT_EQ(flat.work_indptr, (std::vector<int32_t>{0, 2, 3}));
  EXPECT_EQ(flat.qo_tile_indices, (std::vector<int32_t>{2, 0, 1}));
  const auto causal = plan_fi_prefill_sm90(1, 1, 128, b, sms(2), true);
  EXPECT_EQ(causal.work_indptr, (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(causal.qo_tile_indices, (std::vector<int32_t>{2, 1, 0}));
}

// head_dim_vo 64: 192-row tiles, q 384 is 2 tiles (3 at 128 rows); 4 heads, one schedule each.
TEST(FiPrefillSm90, SixtyFourWideValuesTake192RowTiles) {
  const batch b{{4096}, {384}};
  const auto narrow = plan_fi_prefill_sm90(4, 2, 64, b, sms(132), false);
  EXPECT_EQ(narrow.cta_tile_q, 192);
  EXPECT_EQ(narrow.total_works, 4 * 2);
  const auto wide = plan_fi_prefill_sm90(4, 2, 128, b, sms(132), false);
  EXPECT_EQ(wide.cta_tile_q, 128);
  EXPECT_EQ(wide.total_works, 4 * 3);
}

// ceil(rows / 128) + B - 1 with B 1: 524288 rows give 4096 works a head (each head scheduled; graph
// parts 4096 * 2 heads), 524289 give 4097 > 4096 (head 0 only; parts 4097).
TEST(FiPrefillSm90, OneScheduleForAllHeadsPast4096WorksAHead) {
  flashinfer_options o = graph_rows(524288);
  const auto each = plan_fi_prefill_sm90(2, 1, 128, batch{{1}, {1}}, o, false);
  EXPECT_EQ(each.max_works_per_head, 4096);
  EXPECT_FALSE(each.same_schedule_for_all_heads);
  EXPECT_EQ(each.head_indices, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(each.allocated_works, 8192);
  o.total_num_rows = 524289;
  const auto shared = plan_fi_prefill_sm90(2, 1, 128, batch{{1}, {1}}, o, false);
  EXPECT_TRUE(shared.same_schedule_for_all_heads);
  EXPECT_EQ(shared.head_indices, (std::vector<int32_t>{0}));
  EXPECT_EQ(shared.allocated_works, 4097);
}

// 8192 works a part: 32768 bytes each, six parts end at 196608; work_indptr 133 * 4 = 532 to
// 197140; batch_indices at the next multiple of 16, 197152, to 229920.
TEST(FiPrefillSm90, IntWorkspacePartsAndTheFirstThatOverflows) {
  flashinfer_options o = graph_rows(524288);
  const auto p = plan_fi_prefill_sm90(2, 1, 128, batch{{1}, {1}}, o, false);
  const auto parts = fi_int_workspace_parts(p);
  ASSERT_EQ(parts.size(), 8u);
  EXPECT_EQ(parts[5].offset, 5 * 32768);
  EXPECT_EQ(parts[6].offset, 196608);
  EXPECT_EQ(parts[7].offset, 197152);
  EXPECT_EQ(fi_int_workspace_bytes(p), 229920);
  EXPECT_EQ(fi_int_workspace_overflow(p, 229920), "");
  EXPECT_EQ(fi_int_workspace_overflow(p, 229919), "batch_prefill_sm90_batch_indices");
  EXPECT_EQ(fi_int_workspace_overflow(p, 197139), "batch_prefill_sm90_work_indptr");
}

// A graph planned for 1 row while the batch has 300: parts of ceil(1 / 128) + 0 = 1 work, 3 written.
TEST(FiPrefillSm90, GraphRowsShortOfTheBatchWritePastTheParts) {
  flashinfer_options o = graph_rows(1);
  const auto p = plan_fi_prefill_sm90(1, 1, 128, batch{{300}, {300}}, o, false);
  EXPECT_EQ(p.allocated_works, 1);
  EXPECT_EQ(p.total_works, 3);
  EXPECT_TRUE(p.works_past_parts());
}

// FlashInfer raises on 6 qo / 4 kv heads; a kv offset past int32 (2^31 - 1 + 1 tokens at page 1)
// is reported, not wrapped.
TEST(FiPrefillSm90, RefusesWhatFlashInferRaisesOnOrCannotStore) {
  EXPECT_THROW(plan_fi_prefill_sm90(6, 4, 128, batch{{10}, {10}}, sms(132), false), input_error);
  flashinfer_options o = sms(132);
  o.page_size = 1;
  EXPECT_THROW(plan_fi_prefill_sm90(1, 1, 128, batch{{2147483647, 1}, {1, 1}}, o, false), input_error);
}

}  // namespace
}  // namespace headroom
