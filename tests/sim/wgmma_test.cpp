// The simulator's warpgroup product (ctx.wgmma; core/sim/warp_ops.hpp): the 128-byte swizzle by
// hand, and both B layouts against the matrix product, with B placed by the test's own arithmetic (row r's
// 16-byte chunk c at chunk c ^ (r % 8)), and the misuses the simulator records. The device's reading of the
// same layouts is tests/gpu/wgmma_test.cu.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/sim/launch.hpp"
#include "core/sim/native_context.hpp"
#include "core/sim/warp_ops.hpp"
#include "kernels/numeric.hpp"

namespace headroom::sim {
namespace {

// Element (row, col) of rows of 64 elements from `base` (a multiple of 512), swizzled by hand.
int64_t placed(int64_t base, int64_t row, int64_t col) {
  return base + 64 * row + 8 * ((col / 8) ^ (row % 8)) + col % 8;
}

TEST(Wgmma, Sw128SwizzlesChunksWithinEachRowOfAnAtom) {
  EXPECT_EQ(sw128_at(0), 0);
  EXPECT_EQ(sw128_at(5), 5);                     // row 0: chunks stay
  EXPECT_EQ(sw128_at(64), 72);                   // row 1, chunk 0 -> chunk 1
  EXPECT_EQ(sw128_at(64 * 3 + 8 * 2 + 5), 205);  // row 3, chunk 2 -> chunk 1: 192 + 8 + 5
  EXPECT_EQ(sw128_at(64 * 7 + 8 * 7), 64 * 7);   // row 7, chunk 7 -> chunk 0
  EXPECT_EQ(sw128_at(512 + 64 + 8), 512 + 64);   // next atom, row 1, chunk 1 -> chunk 0
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t c = 0; c < 64; ++c) EXPECT_EQ(sw128_at(64 * r + c), placed(0, r, c));
}

struct lane {
  uint32_t a[2][4];
  float d[64];
};

uint32_t pack(float lo, float hi) {
  return from_float<bf16>(lo).bits | static_cast<uint32_t>(from_float<bf16>(hi).bits) << 16;
}

// Two warpgroups, two products each (k 0..15, then 16..31): D = A0 B0 + A1 B1 + D0, A per warpgroup
// from the lanes, B shared by both.
template <int N, bool MN>
void check(int64_t lbo) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> u(-4, 4);  // small integers: every sum exact in fp32
  float A[2][64][32], B[32][N], D0[128][N];
  for (auto& g : A)
    for (auto& row : g)
      for (float& x : row) x = static_cast<float>(u(rng));
  for (auto& row : B)
    for (float& x : row) x = static_cast<float>(u(rng));
  for (auto& row : D0)
    for (float& x : row) x = static_cast<float>(u(rng));
  // B: K-major, row n holds k (product s at columns 16 s ..); MN-major, row k holds n in column
  // blocks of 64, lbo apart (product s at rows 16 s ..).
  std::vector<bf16> b(16384, from_float<bf16>(0.0f));
  for (int k = 0; k < 32; ++k)
    for (int n = 0; n < N; ++n)
      b[MN ? placed((n / 64) * lbo, k, n % 64) : placed(0, n, k)] = from_float<bf16>(B[k][n]);
  std::vector<lane> lanes(256);
  for (int t = 0; t < 256; ++t) {
    const int wg = t / 128, w = (t % 128) / 32, g = (t % 32) / 4, q = t % 4, r = 16 * w + g;
    const float(&x)[64][32] = A[wg];
    for (int s = 0; s < 2; ++s) {
      lanes[t].a[s][0] = pack(x[r][16 * s + 2 * q], x[r][16 * s + 2 * q + 1]);
      lanes[t].a[s][1] = pack(x[r + 8][16 * s + 2 * q], x[r + 8][16 * s + 2 * q + 1]);
      lanes[t].a[s][2] = pack(x[r][16 * s + 2 * q + 8], x[r][16 * s + 2 * q + 9]);
      lanes[t].a[s][3] = pack(x[r + 8][16 * s + 2 * q + 8], x[r + 8][16 * s + 2 * q + 9]);
    }
    for (int i = 0; i < N / 2; ++i)
      lanes[t].d[i] = D0[64 * wg + r + 8 * ((i % 4) / 2)][8 * (i / 4) + 2 * q + i % 2];
  }
  native_view<const bf16> bv{b.data(), static_cast<int64_t>(b.size())};
  emulate_wgmma<bf16, N, MN, 2>(registers_view<lane>{lanes.data()}, 256, bv, lbo, [](lane& x, int s) {
    return wgmma_operands{{x.a[s][0], x.a[s][1], x.a[s][2], x.a[s][3]}, x.d, MN ? 1024 * s : 16 * s};
  });
  for (int t = 0; t < 256; ++t)
    for (int i = 0; i < N / 2; ++i) {
      const int wg = t / 128, w = (t % 128) / 32, g = (t % 32) / 4, q = t % 4;
      const int row = 16 * w + g + 8 * ((i % 4) / 2), col = 8 * (i / 4) + 2 * q + i % 2;
      float want = D0[64 * wg + row][col];
      for (int k = 0; k < 32; ++k) want += A[wg][row][k] * B[k][col];
      ASSERT_EQ(lanes[t].d[i], want) << "thread " << t << " row " << row << " col " << col;
    }
}

TEST(Wgmma, KMajorBOfScores) { check<64, false>(0); }
TEST(Wgmma, KMajorBOfHalfAStep) { check<32, false>(0); }
TEST(Wgmma, MnMajorBOfValuesInTwoColumnBlocks) { check<128, true>(4096); }

// Whole warpgroups only, outside threads(): else the simulator records a misuse.
struct wgmma_kernel {
  struct params {
    int threads;
    bool inside;
  };
  struct shared_storage {
    alignas(16) bf16 b[64 * 64];
  };
  static launch_dim grid(const params&) { return {1, 1, 1}; }
  static launch_dim block(const params& p) { return {32, p.threads / 32, 1}; }
  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const auto b = ctx.template shared<8>(s.b, "b");
    ctx.threads([&](const thread_idx& t) {
      for (int i = t.linear; i < 64 * 64; i += p.threads) b.store(i, bf16{0});
    });
    ctx.sync();
    auto r = ctx.template registers<lane>();
    const auto sel = [](lane& x, int) { return wgmma_operands{{}, x.d, 0}; };
    if (p.inside)
      ctx.threads([&](const thread_idx&) { ctx.template wgmma<bf16, 64, false, 1>(b, 0, r, sel); });
    else
      ctx.template wgmma<bf16, 64, false, 1>(b, 0, r, sel);
  }
};

TEST(Wgmma, PartialWarpgroupsAndThreadDivergentCallsAreMisuses) {
  memory ok;
  launch(ok, wgmma_kernel{}, {128, false});
  EXPECT_TRUE(ok.log.misuse.empty());
  memory partial;
  launch(partial, wgmma_kernel{}, {96, false});
  ASSERT_FALSE(partial.log.misuse.empty());
  EXPECT_NE(partial.log.misuse[0].find("not whole warpgroups"), std::string::npos) << partial.log.misuse[0];
  memory inside;
  launch(inside, wgmma_kernel{}, {128, true});
  ASSERT_FALSE(inside.log.misuse.empty());
  EXPECT_NE(inside.log.misuse[0].find("wgmma() inside threads()"), std::string::npos) << inside.log.misuse[0];
}

}  // namespace
}  // namespace headroom::sim
