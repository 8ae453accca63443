// FlashInfer's batch prefill over the paged cache (kernels/fi_prefill.hpp) on the simulator, every
// access checked, against the fp32 reference: causal and chunked prefill, decode rows (q length 1,
// the tensor-core decode path), GQA groups 1..8, head sizes 64 / 80 / 128 / 256 (512 on CUDA
// cores), bf16 / fp16 / fp32, cta_tile_q 16 / 32 / 64 / 128, split and not, sliding windows, the
// tile pass's edges (rows not a multiple of 16, diagonals and chunk ends mid-step, windows that
// skip steps, several sweeps per tile) and which pass runs; plans from the test's own tiler and a
// few written by hand. Then what a wrong plan does: a CUDA-graph grid
// past the written work entries without a mask reads them uninitialized (catalogue C10), and tiles
// planned for fewer heads per kv head than the layer has leave output rows unwritten.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "kernels/elem_type.hpp"
#include "tests/sim/fi_prefill_support.hpp"

namespace headroom {
namespace {

using prefill_test::prefill_plan;
using prefill_test::run_prefill;
using prefill_test::tile_prefill;
using prefill_test::tiler_options;

struct shape {
  int64_t heads, kv, head_size, window, cta_tile_q, chunk, block_size;
  batch b;
};

rank_layer layer_of(const shape& s) {
  return {"model.layers.0.self_attn.attn",
          s.window ? attn_kind::sliding : attn_kind::full,
          s.heads,
          s.kv,
          s.head_size,
          s.head_size,
          s.window};
}

std::string describe(const shape& s, dtype d) {
  std::string r = std::string(to_string(d)) + " H=" + std::to_string(s.heads) +
                  " KV=" + std::to_string(s.kv) + " D=" + std::to_string(s.head_size) +
                  " W=" + std::to_string(s.window) + " ctq=" + std::to_string(s.cta_tile_q) +
                  " chunk=" + std::to_string(s.chunk) + " seqs";
  for (std::size_t i = 0; i < s.b.seq_lens.size(); ++i)
    r += " " + std::to_string(s.b.seq_lens[i]) + "/" + std::to_string(s.b.query_lens[i]);
  return r;
}

// The largest error seen per dtype (bf16, fp16, fp32), printed at exit.
struct worst {
  double err[3] = {0, 0, 0};
  ~worst() { std::printf("largest |out - ref|: bf16 %.3g, fp16 %.3g, fp32 %.3g\n", err[0], err[1], err[2]); }
};
worst worst_seen;

void expect_clean(const prefill_test::prefill_result& r, const std::string& what) {
  double& w = worst_seen.err[static_cast<int>(r.type)];
  w = std::max(w, r.cmp.max_abs_err);
  EXPECT_FALSE(r.cmp.mismatch) << what << ": " << r.cmp.detail;
  EXPECT_EQ(r.oob + r.uninitialized + r.races + r.misuse, 0) << what << "\n" << r.log;
  EXPECT_EQ(r.unwritten_rows, 0) << what;
}

// Causal prefill (seq = q), chunked prefill (q < seq) and decode rows (q = 1) in one batch.
const batch mixed{{40, 150, 90}, {40, 20, 1}};
const batch causal{{37, 70}, {37, 70}};
const batch decode{{90, 33, 200}, {1, 1, 1}};

const std::vector<shape> shapes = {
    {4, 4, 64, 0, 16, 0, 16, causal},     // G 1, not split
    {4, 2, 128, 0, 64, 48, 16, mixed},    // G 2, split
    {8, 2, 256, 0, 128, 0, 16, mixed},    // G 4, D 256, not split
    {16, 2, 128, 0, 16, 32, 16, mixed},   // G 8, split, short chunks
    {8, 2, 64, 20, 64, 32, 16, mixed},    // window, split (chunks start at the tile's window)
    {8, 4, 128, 33, 16, 0, 7, causal},    // window, not split, 7-token pages
    {32, 4, 128, 0, 16, 64, 16, decode},  // decode rows, G 8, split
    {8, 1, 64, 0, 128, 0, 16, decode},    // decode rows, G 8, one tile
    {6, 2, 80, 0, 64, 0, 16, mixed},      // head size 80 (layout 128)
    {4, 2, 512, 0, 16, 64, 16, mixed},    // D 512: CUDA cores at every dtype
    // A long request sizes the block for 8 warps; the short causal rows leave most of them idle.
    {16, 2, 128, 0, 128, 0, 16, batch{{2100, 40}, {1, 40}}},
    // The tile pass's edges: 15 packed rows (q 5, G 3) whose diagonal ends mid-step (kv 21);
    {6, 2, 128, 0, 16, 0, 16, batch{{21, 5}, {5, 5}}},
    // two queries per 16-row tile (G 8); 2 warps (tile 32) over chunks of 40 keys (steps cut);
    {16, 2, 64, 0, 16, 0, 16, batch{{45}, {45}}},
    {8, 2, 128, 0, 32, 40, 16, batch{{130, 77}, {61, 77}}},
    // a window that skips whole steps before every tile, one narrower than a 128-row sweep, and
    // one at head size 256 (64-row sweeps).
    {4, 4, 128, 24, 16, 0, 16, batch{{300}, {300}}},
    {4, 4, 64, 20, 128, 0, 16, batch{{200}, {200}}},
    {8, 2, 256, 50, 64, 0, 16, mixed},
};

class PrefillVsReference : public ::testing::TestWithParam<dtype> {};

TEST_P(PrefillVsReference, TiledPlans) {
  with_elem_type(GetParam(), "test", [&]<class T>() {
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const shape& s = shapes[i];
      tiler_options o;
      o.group = s.heads / s.kv, o.cta_tile_q = s.cta_tile_q, o.chunk = s.chunk, o.window = s.window;
      prefill_plan pl = tile_prefill(s.b, o);
      // The group's divisor as packaging sets it, none, and a stale one (the kernel must not use it).
      for (const int64_t divisor : {int64_t{0}, int64_t{-1}, o.group + 1}) {
        pl.divisor = divisor;
        expect_clean(run_prefill<T>(layer_of(s), s.b, s.block_size, pl, i),
                     describe(s, GetParam()) + " divisor " + std::to_string(divisor));
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Dtypes, PrefillVsReference, ::testing::Values(dtype::bf16, dtype::fp16, dtype::fp32),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// Every row of a split plan has the chunks the window leaves it (ceil(min(kv, window - 1 +
// cta_tile_q) / chunk)), written out by hand: kv 150 / window 20 / tile 64 / chunk 32: 83 keys, 3.
TEST(Prefill, ChunksOfARowFollowTheWindow) {
  tiler_options o;
  o.cta_tile_q = 64, o.chunk = 32, o.window = 20;
  EXPECT_EQ(prefill_test::chunks_of(150, o), 3);
  EXPECT_EQ(prefill_test::chunks_of(40, o), 2);
  o.window = 0;
  EXPECT_EQ(prefill_test::chunks_of(150, o), 5);
}

// Plans written by hand: the body follows the arrays, not the block index.
TEST(Prefill, HandWrittenPlans) {
  const rank_layer l{"l", attn_kind::full, 4, 2, 64, 64, 0};
  // One request, q 3 over 5 keys, G 2: 6 packed rows, one tile; not split.
  prefill_plan a;
  a.request_indices = {0}, a.qo_tile_indices = {0}, a.kv_tile_indices = {0}, a.o_indptr = {0, 3};
  a.padded = 1, a.cta_tile_q = 16, a.total_num_rows = 3;
  expect_clean(run_prefill<bf16>(l, batch{{5}, {3}}, 16, a, 1), "q 3 kv 5");
  // q 2 over 40 keys in three 16-key chunks, listed backwards, a masked fourth block; partial row
  // of query i, chunk c: o_indptr[0] + 3 i + c.
  prefill_plan b;
  b.request_indices = {0, 0, 0}, b.qo_tile_indices = {0, 0, 0}, b.kv_tile_indices = {2, 1, 0};
  b.o_indptr = {0, 6}, b.merge_indptr = {0, 3, 6}, b.mask = {1, 1, 1, 0};
  b.padded = 4, b.cta_tile_q = 16, b.chunk = 16, b.total_num_rows = 2, b.split = true;
  expect_clean(run_prefill<fp16>(l, batch{{40}, {2}}, 16, b, 2), "q 2 kv 40 split");
  // Two requests, tiles of 4 packed rows, the second request's tiles first.
  prefill_plan c;
  c.request_indices = {1, 1, 0, 0, 0}, c.qo_tile_indices = {1, 0, 2, 1, 0},
  c.kv_tile_indices = {0, 0, 0, 0, 0};
  c.o_indptr = {0, 5, 8}, c.padded = 5, c.cta_tile_q = 4, c.total_num_rows = 8;
  expect_clean(run_prefill<float>(l, batch{{5, 30}, {5, 3}}, 16, c, 3), "two requests, tiles of 4");
}

// Which pass a launch runs, and its shape: the tile pass (a warp per 16 rows of cta_tile_q, at
// most 8, 4 at head size 256) for bf16 / fp16 with whole, aligned rows; attend_range otherwise.
TEST(Prefill, TilePassShape) {
  using K128 = fi_batch_prefill<bf16, 128>;
  using K128W = fi_batch_prefill<bf16, 128, 1, true>;
  using K256 = fi_batch_prefill<bf16, 256>;
  alignas(16) static const bf16 rows[16] = {};
  fi_prefill_params<bf16> p;
  p.in.q.data = p.in.k_cache.data = p.in.v_cache.data = rows;
  p.in.head_size = 128, p.in.max_blocks_per_seq = 4, p.in.block_size = 16;
  const auto tiled = [&]() { return fi_prefill_tiled<bf16, 128>(p); };
  const auto warps = [&](int64_t ctq) {
    p.cta_tile_q = ctq;
    return K128::block(p).y;
  };
  EXPECT_TRUE(tiled());
  EXPECT_EQ(warps(128), 8);
  EXPECT_EQ(warps(64), 4);
  EXPECT_EQ(warps(16), 1);
  EXPECT_EQ(warps(4), 1);
  // Shared memory, by hand: koff 3 stages x 64 keys x 8 B = 1,536 (the stages start at 2,048,
  // aligned to 1,024), the stages 3 x [K|V] x 64 keys x 128 dims x 2 B = 98,304, then q: one 16-byte
  // chunk where q stays in registers, the tile's rows x 256 B where the warpgroup kernel stages it.
  EXPECT_EQ(K128::shared_bytes(p), 2048 + 98304 + 16);
  // The warpgroup kernel: tiles of whole warpgroups (64 and 128 rows) at head sizes 64 and 128.
  EXPECT_FALSE((fi_prefill_wg<bf16, 128>(p)));
  p.cta_tile_q = 64;
  EXPECT_TRUE((fi_prefill_wg<bf16, 128>(p)));
  EXPECT_EQ(K128W::shared_bytes(p), 2048 + 98304 + 64 * 256);
  p.cta_tile_q = 128;
  EXPECT_TRUE((fi_prefill_wg<bf16, 128>(p)));
  EXPECT_EQ(K128::shared_bytes(p), 2048 + 98304 + 16);
  EXPECT_EQ(K128W::shared_bytes(p), 2048 + 98304 + 128 * 256);
  // The tile pass stores aligned pairs: a destination off 16-byte alignment takes attend_range.
  alignas(16) static bf16 out[16];
  p.output.data = out + 1;
  EXPECT_FALSE(tiled());
  p.output.data = out;
  EXPECT_TRUE(tiled());
  p.in.head_size = 256, p.cta_tile_q = 128;
  EXPECT_EQ(K256::block(p).y, 4);  // two sweeps of 64 rows
  // 16 keys a step: koff 384 B (stages at 1,024), stages 3 x 2 x 16 x 256 x 2 B, q 64 rows x 512 B.
  EXPECT_EQ(K256::shared_bytes(p), 1024 + 49152 + 64 * 512);
  EXPECT_FALSE((fi_prefill_wg<bf16, 256>(p)));
  p.in.head_size = 80;  // padded to 128: partial chunks, attend_range
  EXPECT_FALSE(tiled());
  EXPECT_EQ(K128::block(p).y, (attn_block<128>(fi_prefill_max_keys(p), HEADROOM_FI_WARP_KEYS).y));
  p.in.head_size = 128;
  p.in.q.data = rows + 1;  // q not 16-byte aligned
  EXPECT_FALSE(tiled());
  EXPECT_FALSE((fi_prefill_tiled<float, 128>(fi_prefill_params<float>{})));
}

// C10: a CUDA-graph grid of written + 3 blocks without a mask (no split: FlashInfer allocates the
// mask only when it splits) reads request_indices past the written entries, once per padded block
// and kv head; with a mask over the tail (split), nothing is read uninitialized.
TEST(Prefill, GridPastTheWrittenEntries) {
  const rank_layer l{"l", attn_kind::full, 8, 2, 128, 128, 0};
  const batch b{{50, 64}, {50, 1}};
  tiler_options o;
  o.group = 4, o.cta_tile_q = 64, o.extra_blocks = 3;
  const auto bare = run_prefill<bf16>(l, b, 16, tile_prefill(b, o), 4);
  EXPECT_EQ(bare.uninit_request_indices, 3 * 2) << bare.log;
  EXPECT_FALSE(bare.cmp.mismatch) << bare.cmp.detail;  // the written blocks still cover every row
  o.chunk = 32;
  const auto masked = run_prefill<bf16>(l, b, 16, tile_prefill(b, o), 4);
  expect_clean(masked, "split, masked tail");
}

// Tiles planned with 4 heads per kv head for a layer with 8: request r's tiles cover
// ceil(q_r * 4 / cta_tile_q) * cta_tile_q of its q_r * 8 packed rows; the rest, times the kv
// heads, are output rows nobody writes. By hand (cta_tile_q 16, 2 kv heads): q 10: 3 tiles, 48 of
// 80 rows, 32 x 2 = 64; q 5: 2 tiles, 32 of 40, 8 x 2 = 16; q 1: 1 tile covers 8 of 8, 0.
TEST(Prefill, TilesForFewerHeadsLeaveRowsUnwritten) {
  const rank_layer l{"l", attn_kind::full, 16, 2, 64, 64, 0};
  const batch b{{30, 5, 20}, {10, 5, 1}};
  tiler_options o;
  o.group = 4, o.cta_tile_q = 16;
  const auto r = run_prefill<fp16>(l, b, 16, tile_prefill(b, o), 5);
  EXPECT_EQ(r.unwritten_rows, 64 + 16 + 0);
  EXPECT_EQ(r.oob + r.uninitialized + r.races, 0) << r.log;
  EXPECT_TRUE(r.cmp.mismatch);  // the unwritten rows read back as poison
}

}  // namespace
}  // namespace headroom
