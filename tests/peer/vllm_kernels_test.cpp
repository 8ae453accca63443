// Peer tests: vLLM's kernel tests that size plan buffers (vllm-project/vllm at 8e958902; the fp8
// rows at 6adad087): Triton unified attention's softmax-segment buffers and its 3D / 2D path, against
// core/backends/triton.cpp, and ROCm AITER MLA's head padding to 16 heads, against the checker's class C9.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/backends/triton.hpp"
#include "core/check/check.hpp"
#include "core/engine/settings.hpp"
#include "tests/support/laguna.hpp"

namespace headroom {
namespace {

// tests/kernels/attention/test_triton_unified_attention.py::test_triton_unified_attn: NUM_HEADS
// (query, kv) and HEAD_SIZES (both powers of two, so next_power_of_2 keeps them).
const std::vector<std::pair<int64_t, int64_t>> triton_test_heads = {{4, 4}, {8, 2}, {5, 1}};
const std::vector<int64_t> triton_test_head_sizes = {128, 256};

// A plan whose seq_threshold_3D is `thr`, as the test passes it: the builder's thr is 128 // KV_b
// and the buffers depend on KV_b only through it; no CUDA graphs, so no snapping.
triton_plan triton_plan_with_thr(int64_t heads, int64_t head_size, int64_t thr) {
  engine_settings eager;
  eager.cg_mode = cudagraph_mode::none;
  return plan_triton(heads, thr > 0 ? 128 / thr : 256, head_size, {}, eager);
}

batch triton_test_batch(const std::vector<std::pair<int64_t, int64_t>>& q_and_kv_lens) {
  batch b;
  for (const auto& [q, kv] : q_and_kv_lens) {
    b.query_lens.push_back(q);
    b.seq_lens.push_back(kv);
  }
  return b;
}

// The test allocates softmax_segm_output (thr, H, 16, next_pow2(D)) and softmax_segm_max /
// softmax_segm_expsum (thr, H, 16), all float32, for thr in SEQ_THRESHOLD_3D_VALUES = [0, 8].
TEST(VllmTritonUnifiedAttention, SegmentBufferShapes) {
  for (const auto& [h, kv] : triton_test_heads)
    for (int64_t d : triton_test_head_sizes)
      for (int64_t thr : {0, 8}) {
        const triton_plan p = triton_plan_with_thr(h, d, thr);
        ASSERT_EQ(p.thr, thr);
        EXPECT_EQ(find_buffer(p.buffers, "segm_output")->capacity_bytes, thr * h * 16 * d * 4)
            << h << "/" << d;
        EXPECT_EQ(find_buffer(p.buffers, "segm_max")->capacity_bytes, thr * h * 16 * 4);
        EXPECT_EQ(find_buffer(p.buffers, "segm_expsum")->capacity_bytes, thr * h * 16 * 4);
      }
}

// The decode row of seq_lens, [(1, 523), (1, 37), (1, 2011)]: with thr 8 the three one-token
// requests take the 3D path and its writes stay inside the buffers (the test's output matches its
// reference); with thr 0 ("use 2D kernel for decode") no buffer is touched.
TEST(VllmTritonUnifiedAttention, DecodeRowTakesThe3dPathInBounds) {
  const batch b = triton_test_batch({{1, 523}, {1, 37}, {1, 2011}});
  for (const auto& [h, kv] : triton_test_heads)
    for (int64_t d : triton_test_head_sizes) {
      const rank_layer l{"layer", attn_kind::full, h, kv, d, d, 0, 0};
      const triton_plan p = triton_plan_with_thr(h, d, 8);
      EXPECT_TRUE(triton_uses_3d(p, b));
      for (const buffer_need& n : triton_needs(p, l, b))
        EXPECT_LE(n.bytes(), find_buffer(p.buffers, n.name)->capacity_bytes) << n.name;
      const triton_plan none = triton_plan_with_thr(h, d, 0);
      EXPECT_FALSE(triton_uses_3d(none, b));
      EXPECT_TRUE(triton_needs(none, l, b).empty());
    }
}

// The mixed row, [(1, 1328), (5, 18), (129, 463)]: a query longer than one token takes the 2D path
// whatever the threshold.
TEST(VllmTritonUnifiedAttention, MixedRowTakesThe2dPath) {
  const batch b = triton_test_batch({{1, 1328}, {5, 18}, {129, 463}});
  EXPECT_FALSE(triton_uses_3d(triton_plan_with_thr(8, 128, 8), b));
}

// The same test's q_dtype fp8 row (QDTYPES = [None, fp8]: q and the cache in fp8, per-tensor
// scales): the buffers the test allocates do not depend on q_dtype, so an fp8 cache keeps them.
TEST(VllmTritonUnifiedAttention, Fp8RowKeepsTheSegmentBuffers) {
  for (const auto& [h, kv] : triton_test_heads)
    for (int64_t d : triton_test_head_sizes) {
      triton_plan p = triton_plan_with_thr(h, d, 8);
      p.decode_tile = triton_decode_tile(kv_quant::fp8_e4m3);
      EXPECT_EQ(find_buffer(p.buffers, "segm_output")->capacity_bytes, 8 * h * 16 * d * 4) << h << "/" << d;
      EXPECT_EQ(find_buffer(p.buffers, "segm_max")->capacity_bytes, 8 * h * 16 * 4);
    }
}

// The fp8 row of the decode row [(1, 523), (1, 37), (1, 2011)] with thr 8: q is 1 byte, so
// TILE_SIZE_DECODE is 32 (vllm/v1/attention/ops/triton_unified_attention.py at 6adad087,
// _get_tile_size: "tile size must be at least 32 for fp8"), and a sequence of L tokens runs
// cdiv(L, tiles_per_segment * 32) segments, tiles_per_segment = cdiv(L, 16 * 32):
//   523: cdiv(523, 512) = 2 tiles, cdiv(523, 64) = 9 segments (11 with 16-token tiles: 3, 48)
//   37: 1 tile, cdiv(37, 32) = 2 segments (3 with 16-token tiles)
//   2011: cdiv(2011, 512) = 4 tiles, cdiv(2011, 128) = 16 segments
// The 3D path is taken and its writes stay inside the buffers (the test's output matches).
TEST(VllmTritonUnifiedAttention, Fp8DecodeRowRunsFewerSegmentsInBounds) {
  const batch b = triton_test_batch({{1, 523}, {1, 37}, {1, 2011}});
  const std::vector<std::pair<int64_t, int64_t>> segments = {{523, 9}, {37, 2}, {2011, 16}};
  for (const auto& [len, want] : segments) {
    int64_t active = 0;
    for (int64_t s = 0; s < triton_segments; ++s)
      if (triton_segment_active(s, len, triton_decode_tile(kv_quant::fp8_e4m3))) ++active;
    EXPECT_EQ(active, want) << len << " tokens";
  }
  for (const auto& [h, kv] : triton_test_heads)
    for (int64_t d : triton_test_head_sizes) {
      const rank_layer l{"layer", attn_kind::full, h, kv, d, d, 0, 0};
      triton_plan p = triton_plan_with_thr(h, d, 8);
      p.decode_tile = triton_decode_tile(kv_quant::fp8_e4m3);
      EXPECT_TRUE(triton_uses_3d(p, b));
      for (const buffer_need& n : triton_needs(p, l, b))
        EXPECT_LE(n.bytes(), find_buffer(p.buffers, n.name)->capacity_bytes) << n.name;
    }
}

// tests/kernels/attention/test_rocm_aiter_mla_head_padding.py: an MLA model (q rows of 576, outputs
// of 512, one latent kv head) with `heads` heads per rank and the decode kernel's 16-head tile.
report aiter_mla_check(int64_t heads, bool divisors_only) {
  model_geometry m = testing::uniform(2, heads, 1, 576);
  for (auto& l : m.layers) l.head_size_v = 512;
  check_options o;
  o.backends = {backend::triton};
  o.engine.head_tile = 16;
  if (divisors_only) o.mutants = {"head-pad-divisors-only"};
  model_executor ex;
  return run_check(m, o, ex);
}

// test_all_small_head_counts_pad_to_16_and_round_trip[1 .. 15], test_h12_query_is_tile_padded_to_h16,
// test_h12_output_discards_padding_heads, test_num_heads_ge_16_is_passthrough: every count below 16
// pads q to exactly 16 heads and unpads to its own h rows; 16 and more pass through. No C9 finding.
TEST(VllmAiterMlaHeadPadding, EverySmallCountPadsToSixteen) {
  for (int64_t h : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 32})
    EXPECT_TRUE(aiter_mla_check(h, false).ok) << h << " heads";
}

// test_h6_tp16_query_is_padded_to_h16: "the old append-only padding produced cat(6, 6) = 12 heads".
// The divisors-only form (the mutant) pads 6 heads to 12: one decode token's padded q holds
// 12 * 576 * 2 = 13824 bytes where the 16-head tile reads 16 * 576 * 2 = 18432.
TEST(VllmAiterMlaHeadPadding, OldPaddingOfSixHeadsGivesTwelve) {
  const report r = aiter_mla_check(6, true);
  bool seen = false;
  for (const violation& v : r.violations)
    if (v.buffer == "mla_q_padded") {
      seen = true;
      EXPECT_EQ(v.capacity_bytes, 13824);
      EXPECT_EQ(v.required_bytes, 18432);
    }
  EXPECT_TRUE(seen);
}

// test_existing_divisor_head_mapping_is_unchanged: divisors of 16 (1, 2, 4, 8) keep the
// repeat_interleave padding and the strided unpadding, which round-trip: clean in the old form too.
TEST(VllmAiterMlaHeadPadding, DivisorCountsUnchanged) {
  for (int64_t h : {1, 2, 4, 8}) EXPECT_TRUE(aiter_mla_check(h, true).ok) << h << " heads";
}

}  // namespace
}  // namespace headroom
