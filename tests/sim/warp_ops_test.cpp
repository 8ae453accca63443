// The warp collectives of the host contexts (core/sim/warp_ops.hpp): the tensor-core product and
// the 8x8 transpose against plain matrix arithmetic, with the operands scattered into lane
// fragments by PTX's layout; strided lane reductions; misuse of a collective inside threads().
// (Whether the hardware agrees with this layout is the GPU lane's test: sim vs GPU outputs.)
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/sim/launch.hpp"
#include "core/sim/warp_ops.hpp"
#include "kernels/numeric.hpp"

namespace headroom::sim {
namespace {

struct lane_regs {
  uint32_t a[4], b[2], t[3];
  float c[4];
};

template <class T>
uint16_t bits_of(float x) {
  return from_float<T>(x).bits;
}

uint32_t pack(uint16_t lo, uint16_t hi) { return lo | static_cast<uint32_t>(hi) << 16; }

template <class T>
void check_mma() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  float A[16][16], B[16][8], C[16][8];
  for (auto& row : A)
    for (float& x : row) x = to_float(from_float<T>(u(rng)));  // representable in T
  for (auto& row : B)
    for (float& x : row) x = to_float(from_float<T>(u(rng)));
  for (auto& row : C)
    for (float& x : row) x = u(rng);
  std::vector<lane_regs> lanes(64);  // two warps: the second gets the same operands
  for (int l = 0; l < 64; ++l) {
    const int g = (l % 32) / 4, q = l % 4;
    auto& r = lanes[l];
    r.a[0] = pack(bits_of<T>(A[g][2 * q]), bits_of<T>(A[g][2 * q + 1]));
    r.a[1] = pack(bits_of<T>(A[g + 8][2 * q]), bits_of<T>(A[g + 8][2 * q + 1]));
    r.a[2] = pack(bits_of<T>(A[g][2 * q + 8]), bits_of<T>(A[g][2 * q + 9]));
    r.a[3] = pack(bits_of<T>(A[g + 8][2 * q + 8]), bits_of<T>(A[g + 8][2 * q + 9]));
    r.b[0] = pack(bits_of<T>(B[2 * q][g]), bits_of<T>(B[2 * q + 1][g]));
    r.b[1] = pack(bits_of<T>(B[2 * q + 8][g]), bits_of<T>(B[2 * q + 9][g]));
    r.c[0] = C[g][2 * q], r.c[1] = C[g][2 * q + 1], r.c[2] = C[g + 8][2 * q], r.c[3] = C[g + 8][2 * q + 1];
  }
  registers_view<lane_regs> view{lanes.data()};
  emulate_mma<T>(view, 64, [](lane_regs& r) {
    return mma_operands{{r.a[0], r.a[1], r.a[2], r.a[3]}, {r.b[0], r.b[1]}, r.c};
  });
  for (int l = 0; l < 64; ++l) {
    const int g = (l % 32) / 4, q = l % 4;
    for (int c = 0; c < 4; ++c) {
      const int i = g + 8 * (c / 2), j = 2 * q + c % 2;
      double want = C[i][j];
      for (int k = 0; k < 16; ++k) want += static_cast<double>(A[i][k]) * B[k][j];
      EXPECT_NEAR(lanes[l].c[c], want, 1e-5) << "lane " << l << " element (" << i << "," << j << ")";
    }
  }
}

TEST(WarpOps, MmaBf16MatchesTheMatrixProduct) { check_mma<bf16>(); }
TEST(WarpOps, MmaFp16MatchesTheMatrixProduct) { check_mma<fp16>(); }

TEST(WarpOps, Transpose8x8TransposesEveryMatrixOfTheLane) {
  std::vector<lane_regs> lanes(32);
  auto element = [](int m, int row, int col) { return static_cast<uint16_t>(1000 * m + 8 * row + col); };
  for (int l = 0; l < 32; ++l)
    for (int m = 0; m < 3; ++m)
      lanes[l].t[m] = pack(element(m, l / 4, 2 * (l % 4)), element(m, l / 4, 2 * (l % 4) + 1));
  emulate_transpose8x8<3>(registers_view<lane_regs>{lanes.data()}, 32, [](lane_regs& r) { return &r.t[0]; });
  for (int l = 0; l < 32; ++l)
    for (int m = 0; m < 3; ++m) {
      const int g = l / 4, c = 2 * (l % 4);  // the lane now holds M^T[g][c..c+1] = M[c..c+1][g]
      EXPECT_EQ(lanes[l].t[m], pack(element(m, c, g), element(m, c + 1, g)))
          << "lane " << l << " matrix " << m;
    }
}

TEST(WarpOps, StridedButterflyReducesLanesStrideApart) {
  std::vector<fvec<2>> v(32);
  for (int l = 0; l < 32; ++l) v[l] = {{static_cast<float>(l), static_cast<float>(-l)}};
  registers_view<fvec<2>> view{v.data()};
  lane_butterfly(view, 32, 8, 4, [](float a, float b) { return a > b ? a : b; });
  for (int l = 0; l < 32; ++l) {
    EXPECT_EQ(v[l][0], 28 + l % 4) << "lane " << l;  // max over lanes l % 4, l % 4 + 4, ..., + 28
    EXPECT_EQ(v[l][1], -(l % 4)) << "lane " << l;
  }
}

// A collective inside threads() is a misuse the simulator records instead of running.
struct collective_in_threads {
  struct params {
    int unused;
  };
  struct shared_storage {
    float unused;
  };
  static launch_dim grid(const params&) { return {1, 1, 1}; }
  static launch_dim block(const params&) { return {32, 1, 1}; }
  template <class Ctx>
  void operator()(Ctx& ctx, const params&, shared_storage&) const {
    auto r = ctx.template registers<lane_regs>();
    ctx.threads([&](const thread_idx&) {
      ctx.template mma_m16n8k16<bf16>(r, [](lane_regs& x) { return mma_operands{{}, {}, x.c}; });
    });
  }
};

TEST(WarpOps, MmaInsideThreadsIsMisuse) {
  memory m;
  launch(m, collective_in_threads{}, collective_in_threads::params{0});
  ASSERT_FALSE(m.log.misuse.empty());
  EXPECT_NE(m.log.misuse[0].find("mma_m16n8k16() inside threads()"), std::string::npos) << m.log.misuse[0];
}

}  // namespace
}  // namespace headroom::sim
