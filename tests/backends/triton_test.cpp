// Triton unified attention sizing (docs/engines.md §5).
#include <gtest/gtest.h>

#include "core/backends/triton.hpp"
#include "core/util/error.hpp"

namespace headroom {
namespace {

rank_layer layer(int64_t h, int64_t kv, int64_t d) {
  return {"l", attn_kind::sliding, h, kv, d, d, 512};
}

TEST(Triton, CaptureSizesFollowTheDefaults) {
  auto s = capture_sizes(512);
  EXPECT_EQ(s[0], 1);
  EXPECT_EQ(s[2], 4);
  EXPECT_EQ(s[3], 8);
  EXPECT_EQ(s[3 + 30], 248);
  EXPECT_EQ(s[3 + 31], 256);
  EXPECT_EQ(s.back(), 512);
}

TEST(Triton, ThresholdIs128OverKvSnappedAndCapped) {
  triton_options o;
  EXPECT_EQ(triton_threshold(8, o), 16);
  EXPECT_EQ(triton_threshold(1, o), 128);
  EXPECT_EQ(triton_threshold(3, o), 40);   // 42 snaps to 40 (nearest capture size)
  o.max_num_seqs = 10;
  EXPECT_EQ(triton_threshold(1, o), 8);    // capped at 10, snapped to 8
  triton_options raw;
  raw.cap_max_num_seqs = raw.snap_to_capture = false;
  EXPECT_EQ(triton_threshold(3, raw), 42);
  EXPECT_EQ(triton_threshold(256, raw), 0);
}

// Without snapping or a cap, thr is exactly 128 // KV, and the 3D path serves batches up to it.
TEST(Triton, RawThresholdBoundsThe3DPath) {
  triton_options raw;
  raw.cap_max_num_seqs = raw.snap_to_capture = false;
  for (int64_t kv : {1, 2, 4, 8, 16}) {
    const triton_plan p = plan_triton(8 * kv, kv, 128, raw);
    EXPECT_EQ(p.thr, 128 / kv);
    EXPECT_TRUE(triton_uses_3d(p, decode_batch(128 / kv, 64))) << kv;
    EXPECT_FALSE(triton_uses_3d(p, decode_batch(128 / kv + 1, 64))) << kv;
  }
}

TEST(Triton, BuffersAreThrTimesBuilderHeads) {
  triton_plan p = plan_triton(48, 8, 128, triton_options{});
  EXPECT_EQ(p.thr, 16);
  EXPECT_EQ(find_buffer(p.buffers, "segm_output")->capacity_bytes, 16LL * 48 * 16 * 128 * 4);
  EXPECT_EQ(find_buffer(p.buffers, "segm_max")->capacity_bytes, 16LL * 48 * 16 * 4);
}

TEST(Triton, SegmentsActivateWithLength) {
  EXPECT_TRUE(triton_segment_active(0, 1));
  EXPECT_FALSE(triton_segment_active(1, 16));
  EXPECT_TRUE(triton_segment_active(1, 17));
  for (int s = 0; s < 16; ++s) EXPECT_TRUE(triton_segment_active(s, 256));
  EXPECT_FALSE(triton_segment_active(15, 240));
}

TEST(Triton, LagunaModelWideOverflowsAbove12AtTp1) {
  triton_plan p = plan_triton(48, 8, 128, triton_options{});
  const auto l = layer(64, 8, 128);
  auto cap = find_buffer(p.buffers, "segm_output")->capacity_elems();
  for (int64_t t = 1; t <= 16; ++t) {
    auto need = triton_needs(p, l, decode_batch(t, 256));
    ASSERT_EQ(need.size(), 3u);
    EXPECT_EQ(need[0].elems, t * 64 * 16 * 128);
    EXPECT_EQ(need[0].elems > cap, t > 12) << t;
    EXPECT_EQ(need[1].elems > find_buffer(p.buffers, "segm_max")->capacity_elems(), t > 12);
  }
  EXPECT_TRUE(triton_needs(p, l, decode_batch(17, 256)).empty());  // 2D path
  batch mixed{{256, 256}, {1, 2}};
  EXPECT_TRUE(triton_needs(p, l, mixed).empty());
}

TEST(Triton, NeedCountsOnlyActiveSegmentsAndRealHeadSize) {
  triton_plan p = plan_triton(8, 8, 80, triton_options{});
  EXPECT_EQ(p.head_size_padded, 128);
  auto need = triton_needs(p, layer(8, 8, 80), decode_batch(1, 16));  // one active segment
  EXPECT_EQ(need[1].elems, 7 * 16 + 1);
  EXPECT_EQ(need[0].elems, (7 * 16) * 128 + 80);
}

TEST(Triton, LaunchShapeFollowsGroupSize) {
  auto s = triton_launch_shape(layer(64, 8, 128), decode_batch(4, 100));
  EXPECT_EQ(s.block_m, 16);
  EXPECT_EQ(s.block_q, 2);
  EXPECT_EQ(s.grid_x, 4 / 2 + 4);
  EXPECT_EQ(s.grid_y, 8);
  auto big = triton_launch_shape(layer(64, 2, 128), decode_batch(4, 100));
  EXPECT_EQ(big.block_m, 32);
  EXPECT_EQ(big.block_q, 1);
}

TEST(Triton, HugeGeometryOverflowIsReported) {
  triton_options o;
  o.snap_to_capture = o.cap_max_num_seqs = false;
  EXPECT_THROW(plan_triton(int64_t{1} << 40, 1, int64_t{1} << 20, o), overflow_error);
}

}  // namespace
}  // namespace headroom
