// Triton unified attention sizing (docs/engines.md §5).
#include <gtest/gtest.h>

#include "core/backends/triton.hpp"
#include "core/util/error.hpp"

namespace headroom {
namespace {

rank_layer sliding_layer(int64_t h, int64_t kv, int64_t d) {
  return {"l", attn_kind::sliding, h, kv, d, d, 512};
}

// Engine settings with a given max_num_seqs and everything else at vLLM's defaults.
engine_settings with_seqs(int64_t max_num_seqs) {
  engine_settings e;
  e.max_num_seqs = max_num_seqs;
  return e;
}

// vLLM's default list at max_num_seqs 256: M = min(256 * 2, 512) = 512, so 1, 2, 4, the 31
// multiples of 8 up to 248, then 256..512 step 16 (17 sizes): 51 sizes.
TEST(Settings, DefaultCaptureSizes) {
  const auto s = capture_sizes_of(engine_settings{});
  ASSERT_EQ(s.size(), 51u);
  EXPECT_EQ(s[2], 4);
  EXPECT_EQ(s[3], 8);
  EXPECT_EQ(s[33], 248);
  EXPECT_EQ(s[34], 256);
  EXPECT_EQ(s.back(), 512);
  EXPECT_EQ(capture_sizes_of(with_seqs(10)), (std::vector<int64_t>{1, 2, 4, 8, 16}));  // M = 20
  engine_settings tokens = with_seqs(10);
  tokens.max_num_batched_tokens = 20;  // appended when not above M
  EXPECT_EQ(capture_sizes_of(tokens), (std::vector<int64_t>{1, 2, 4, 8, 16, 20}));
  engine_settings m300;
  m300.max_capture_size = 300;  // the list ends at the last step below M
  EXPECT_EQ(max_capture_of(m300), 288);
  engine_settings spec;  // k = 2: whole verify passes of 3 tokens
  spec.num_speculative_tokens = 2;
  const auto r = capture_sizes_of(spec);
  EXPECT_EQ((std::vector<int64_t>(r.begin(), r.begin() + 5)), (std::vector<int64_t>{3, 6, 9, 18, 24}));
  engine_settings eager;
  eager.cg_mode = cudagraph_mode::none;
  EXPECT_TRUE(capture_sizes_of(eager).empty());
  EXPECT_EQ(padded_graph_size(engine_settings{}, 13), 16);
  EXPECT_EQ(padded_graph_size(engine_settings{}, 513), 0);  // eager: not padded
}

// vLLM's seq_threshold_3D: 128 // kv snapped to the nearest capture size, ties to the smaller;
// no cap at max_num_seqs (SGLang's rule, an option here).
TEST(Triton, ThresholdIs128OverKvSnappedToTheNearestCaptureSize) {
  const triton_options o;
  const engine_settings e;
  EXPECT_EQ(triton_threshold(8, o, e), 16);
  EXPECT_EQ(triton_threshold(1, o, e), 128);
  EXPECT_EQ(triton_threshold(3, o, e), 40);            // 42 snaps to 40
  EXPECT_EQ(triton_threshold(10, o, e), 8);            // 12 is as far from 8 as from 16: the smaller
  EXPECT_EQ(triton_threshold(6, o, e), 24);            // 21 snaps to 24
  EXPECT_EQ(triton_threshold(1, o, with_seqs(4)), 8);  // the largest capture size, 8
  engine_settings piecewise;
  piecewise.cg_mode = cudagraph_mode::piecewise;  // no FULL graphs: no snapping
  EXPECT_EQ(triton_threshold(3, o, piecewise), 42);
  triton_options capped;
  capped.cap_max_num_seqs = true;
  EXPECT_EQ(triton_threshold(1, capped, with_seqs(10)), 8);  // capped at 10, snapped to 8
  triton_options raw;
  raw.snap_to_capture = false;
  EXPECT_EQ(triton_threshold(3, raw, e), 42);
  EXPECT_EQ(triton_threshold(256, raw, e), 0);
}

// Without snapping or a cap, thr is exactly 128 // KV, and the 3D path serves batches up to it.
TEST(Triton, RawThresholdBoundsThe3DPath) {
  triton_options raw;
  raw.snap_to_capture = false;
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
  const auto l = sliding_layer(64, 8, 128);
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
  auto need = triton_needs(p, sliding_layer(8, 8, 80), decode_batch(1, 16));  // one active segment
  EXPECT_EQ(need[1].elems, 7 * 16 + 1);
  EXPECT_EQ(need[0].elems, (7 * 16) * 128 + 80);
}

TEST(Triton, LaunchShapeFollowsGroupSize) {
  auto s = triton_launch_shape(sliding_layer(64, 8, 128), decode_batch(4, 100));
  EXPECT_EQ(s.block_m, 16);
  EXPECT_EQ(s.block_q, 2);
  EXPECT_EQ(s.grid_x, 4 / 2 + 4);
  EXPECT_EQ(s.grid_y, 8);
  auto big = triton_launch_shape(sliding_layer(64, 2, 128), decode_batch(4, 100));
  EXPECT_EQ(big.block_m, 32);
  EXPECT_EQ(big.block_q, 1);
  // Fewer query heads than kv heads (a builder's model-wide count under a layer's kv heads): the
  // shape of a group of one, not a division by zero.
  auto odd = triton_launch_shape(sliding_layer(1, 2, 128), decode_batch(4, 100));
  EXPECT_EQ(odd.block_m, 16);
  EXPECT_EQ(odd.block_q, 16);
  EXPECT_EQ(odd.grid_x, 4 / 16 + 4);
}

TEST(Triton, HugeGeometryOverflowIsReported) {
  triton_options o;
  o.snap_to_capture = false;
  EXPECT_THROW(plan_triton(int64_t{1} << 40, 1, int64_t{1} << 20, o), overflow_error);
}

}  // namespace
}  // namespace headroom
