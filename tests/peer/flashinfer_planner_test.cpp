// Peer tests: FlashInfer's own tests of its planners (flashinfer-ai/flashinfer at fb28d72,
// tests/attention/) against core/backends/fi_prefill.cpp, fi_decode.cpp, fi_workspace.cpp and
// fi_device.cpp: the split-KV plan of a short causal prefill, the CTA tile height's shared-memory
// probe, and which plans take float workspace.
#include <gtest/gtest.h>

#include <vector>

#include "core/backends/flashinfer.hpp"

namespace headroom {
namespace {

// tests/attention/test_batch_prefill_kernels.py::test_paged_prefill_split_kv_empty_chunk: one request, qo_len
// 2, kv_len 129, 8 query heads on 2 kv heads, head_dim 128, page_size 16, no CUDA graph. The test relies on
// the plan splitting the KV so that the first token (position 127) has no attendable key in the last chunk: 9
// pages against the minimum chunk of 128 / 16 = 8 pages give chunks [0, 128) and [128, 129), one query tile
// of the 2 * 4 = 8 packed rows, so two work items (chunk 8 pages fits any device's budget).
TEST(FlashInferPrefillPlan, ShortCausalPrefillSplitsIntoAnEmptyLastChunk) {
  batch b;
  b.seq_lens = {129};
  b.query_lens = {2};
  flashinfer_options o;
  o.page_size = 16;
  const fi_prefill_plan p = plan_fi_prefill(8, 2, 128, b, o);
  EXPECT_TRUE(p.split_kv);
  EXPECT_EQ(p.kv_chunk_size, 128);
  EXPECT_EQ(p.kv_chunks, (std::vector<int64_t>{2}));
  EXPECT_EQ(p.new_batch_size, 2);
  EXPECT_EQ(p.kv_tile_indices[0], 0);
  EXPECT_EQ(p.kv_tile_indices[1], 1);
  // Token 0 attends keys 0 .. 127 (causal: kv_len - qo_len = 127 keys precede it, plus itself),
  // and the last chunk starts at key 128.
  const int64_t last_key_of_token0 = 129 - 2;
  EXPECT_LT(last_key_of_token0, p.kv_chunk_size * (p.kv_chunks[0] - 1));
}

// tests/attention/test_workspace_size.py::test_batch_decode_workspace_size_plans_with_exact_buffers
// [False, True]: batch 4, kv_len 4096, page_size 16, 16 query heads on 4 kv heads, head_dim 128,
// fp16: both workspaces are non-empty. 4 x 4 = 16 blocks leave the grid unfilled, so the KV splits
// and tmp_v / tmp_s take float workspace.
TEST(FlashInferWorkspaceSize, DecodeWorkspacesAreNonEmpty) {
  for (bool graph : {false, true}) {
    flashinfer_options o;
    o.page_size = 16;
    o.cuda_graph = graph;
    const fi_decode_plan p = plan_fi_decode(16, 4, 128, dtype::fp16, decode_batch(4, 4096), o);
    EXPECT_TRUE(p.split) << graph;
    EXPECT_GT(fi_float_workspace_bytes(p.buffers), 0) << graph;
    EXPECT_GT(fi_int_workspace_bytes(p), 0) << graph;
  }
}

// test_workspace_size.py::test_batch_prefill_workspace_size_plans_fixed_split_with_exact_buffers:
// batch 3, qo_len 64, kv_len 1024, page_size 16, 16 / 4 heads, head_dim 128, fixed_split_size 16
// pages: the float workspace is non-empty (64 pages split into 4 chunks of 16).
TEST(FlashInferWorkspaceSize, FixedSplitPrefillFloatWorkspaceIsNonEmpty) {
  batch b;
  b.seq_lens.assign(3, 1024);
  b.query_lens.assign(3, 64);
  flashinfer_options o;
  o.page_size = 16;
  o.fixed_split_size = 16;
  const fi_prefill_plan p = plan_fi_prefill(16, 4, 128, b, o);
  EXPECT_TRUE(p.split_kv);
  EXPECT_EQ(p.kv_chunks, (std::vector<int64_t>{4, 4, 4}));
  EXPECT_GT(fi_float_workspace_bytes(p.buffers), 0);
  EXPECT_GT(fi_int_workspace_bytes(p), 0);
}

// test_batch_prefill_kernels.py::test_batch_prefill_paged_cta_tile_q_smem_probe_qk448_vo256: batch 2, qo_len
// 8, group 1, so the average packed query is 8 rows (<= 16: the probe branch). Expected: CTA_TILE_Q 64 when
// 16 * qk * 2 + (qk + vo) * 16 * 4 * kv_bytes exceeds the per-block opt-in shared memory, else 16.
// At fp16 that is 104448 bytes: 16 on SM90 (232448 B opt-in). At 1-byte KV it is 59392 bytes: 16
// on every part, a 99 KB (101376 B) one included. headroom's probe takes one head dim (qk = vo);
// with vo = 256 these two rows agree. The third row, fp16 on a 99 KB part (64 upstream), is
// asymmetric-only and a disagreement (docs/peer-suite.md).
TEST(FlashInferCtaTileQ, SharedMemoryProbeOnSm90AndOneByteKv) {
  EXPECT_EQ(fi_cta_tile_q(8, 256, 2, h200_params()), 16);
  device_params small = h200_params();
  small.compute_major = 12;  // SM120, 99 KB opt-in
  small.max_smem_per_block_optin = 101376;
  EXPECT_EQ(fi_cta_tile_q(8, 256, 1, small), 16);
  device_params sm100 = h200_params();
  sm100.compute_major = 10;
  EXPECT_EQ(fi_cta_tile_q(8, 256, 1, sm100), 16);
}

}  // namespace
}  // namespace headroom
