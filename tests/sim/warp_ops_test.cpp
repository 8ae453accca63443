// The warp collectives of the host contexts (core/sim/warp_ops.hpp): the tensor-core product and
// the 8x8 transpose against plain matrix arithmetic, with the operands scattered into lane
// fragments by PTX's layout; strided lane reductions; misuse of a collective inside threads().
// (Whether the hardware agrees with this layout is the GPU lane's test: sim vs GPU outputs.)
#include <gtest/gtest.h>

#include <array>
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

// Every lane's four registers of an ldmatrix.x4 (Trans: .trans) of the rows the lanes name.
template <bool Trans>
std::array<std::array<uint32_t, 4>, 32> ldmatrix_x4(const uint16_t (&rows)[32][8]) {
  std::array<std::array<uint32_t, 4>, 32> frag{};
  uint32_t* dst[32];
  for (int l = 0; l < 32; ++l) dst[l] = frag[l].data();
  ldmatrix_lanes<4, Trans>(rows, dst);
  return frag;
}

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

// ldmatrix.trans of four tiles of a 16 x 16 V (rows are keys, columns dims; tiles keys 0-7 / 8-15
// by dims 0-7 / 8-15) must give, per 8 dims, the B operand of P V: checked through the emulated
// product, P = a 16 x 16 matrix of small integers, so D = P V is exact.
TEST(WarpOps, LdmatrixTransGivesTheBOperandOfAKeysByDimsTile) {
  float V[16][16], P[16][16];
  uint16_t rows[32][8];
  for (int k = 0; k < 16; ++k)
    for (int d = 0; d < 16; ++d)
      V[k][d] = static_cast<float>((3 * k + 5 * d) % 11 - 5), P[k][d] = ((k + 2 * d) % 5) - 2.0f;
  for (int l = 0; l < 32; ++l) {  // lane 8i + r names key 8 (i % 2) + r, dims 8 (i / 2) ..
    const int i = l / 8, key = 8 * (i % 2) + l % 8;
    for (int e = 0; e < 8; ++e) rows[l][e] = bits_of<bf16>(V[key][8 * (i / 2) + e]);
  }
  std::vector<lane_regs> lanes(32);
  const auto frag = ldmatrix_x4<true>(rows);
  for (int h = 0; h < 2; ++h) {  // dims 8h .. 8h + 7
    for (int l = 0; l < 32; ++l) {
      const int g = l / 4, q = l % 4;
      auto& r = lanes[l];
      r.a[0] = pack(bits_of<bf16>(P[g][2 * q]), bits_of<bf16>(P[g][2 * q + 1]));
      r.a[1] = pack(bits_of<bf16>(P[g + 8][2 * q]), bits_of<bf16>(P[g + 8][2 * q + 1]));
      r.a[2] = pack(bits_of<bf16>(P[g][2 * q + 8]), bits_of<bf16>(P[g][2 * q + 9]));
      r.a[3] = pack(bits_of<bf16>(P[g + 8][2 * q + 8]), bits_of<bf16>(P[g + 8][2 * q + 9]));
      r.b[0] = frag[l][2 * h], r.b[1] = frag[l][2 * h + 1];
      for (float& c : r.c) c = 0.0f;
    }
    emulate_mma<bf16>(registers_view<lane_regs>{lanes.data()}, 32, [](lane_regs& r) {
      return mma_operands{{r.a[0], r.a[1], r.a[2], r.a[3]}, {r.b[0], r.b[1]}, r.c};
    });
    for (int l = 0; l < 32; ++l)
      for (int c = 0; c < 4; ++c) {
        const int i = l / 4 + 8 * (c / 2), d = 8 * h + 2 * (l % 4) + c % 2;
        float want = 0.0f;
        for (int k = 0; k < 16; ++k) want += P[i][k] * V[k][d];
        EXPECT_EQ(lanes[l].c[c], want) << "lane " << l << " row " << i << " dim " << d;
      }
  }
}

// ldmatrix (not transposed) of four tiles of a 16 x 16 A (tiles rows 0-7 / 8-15 by columns 0-7 /
// 8-15, lane 8i + r naming row r + 8 (i % 2) at columns 8 (i / 2) ..) must give mma's A operand:
// checked through the emulated product with a B of small integers, against the sum by hand.
TEST(WarpOps, LdmatrixGivesTheAOperandOfARowsByColumnsTile) {
  float A[16][16], B[16][8];
  uint16_t rows[32][8];
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 16; ++k) A[i][k] = static_cast<float>((7 * i + 3 * k) % 9 - 4);
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) B[k][n] = static_cast<float>((k + 5 * n) % 7 - 3);
  for (int l = 0; l < 32; ++l) {
    const int i = l / 8, row = l % 8 + 8 * (i % 2);
    for (int e = 0; e < 8; ++e) rows[l][e] = bits_of<bf16>(A[row][8 * (i / 2) + e]);
  }
  std::vector<lane_regs> lanes(32);
  const auto frag = ldmatrix_x4<false>(rows);
  for (int l = 0; l < 32; ++l) {  // B (16 x 8, col): lane 4g + q holds column g, rows 2q, + 1, + 8, + 9
    const int g = l / 4, q = l % 4;
    auto& r = lanes[l];
    for (int e = 0; e < 4; ++e) r.a[e] = frag[l][e];
    r.b[0] = pack(bits_of<bf16>(B[2 * q][g]), bits_of<bf16>(B[2 * q + 1][g]));
    r.b[1] = pack(bits_of<bf16>(B[2 * q + 8][g]), bits_of<bf16>(B[2 * q + 9][g]));
    for (float& c : r.c) c = 0.0f;
  }
  emulate_mma<bf16>(registers_view<lane_regs>{lanes.data()}, 32, [](lane_regs& r) {
    return mma_operands{{r.a[0], r.a[1], r.a[2], r.a[3]}, {r.b[0], r.b[1]}, r.c};
  });
  for (int l = 0; l < 32; ++l)
    for (int c = 0; c < 4; ++c) {
      const int i = l / 4 + 8 * (c / 2), n = 2 * (l % 4) + c % 2;
      float want = 0.0f;
      for (int k = 0; k < 16; ++k) want += A[i][k] * B[k][n];
      EXPECT_EQ(lanes[l].c[c], want) << "lane " << l << " row " << i << " column " << n;
    }
}

// The simulator reads each lane's row as that thread's checked shared load: a lane naming a row
// past the array is an out-of-bounds access of the shared view, another thread's row read before
// the barrier that ends its writer's epoch is a race, and the in-bounds lanes get their fragments.
struct ldmatrix_kernel {
  struct params {
    buffer_ref<uint32_t> out;
    int64_t bad_lane = -1;  // names the row past the array
    bool barrier = true;
    int rotate = 0;  // lane l names row l + rotate (mod 32), another thread's when not 0
  };
  struct shared_storage {
    alignas(16) bf16 tile[32 * 8];
  };
  static launch_dim grid(const params&) { return {1, 1, 1}; }
  static launch_dim block(const params&) { return {32, 1, 1}; }
  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const auto a = ctx.template shared<8>(s.tile, "tile");
    const auto out = ctx.global(p.out);
    ctx.threads([&](const thread_idx& t) {
      for (int e = 0; e < 8; ++e) a.store(8 * t.x + e, bf16{static_cast<uint16_t>(8 * t.x + e)});
    });
    if (p.barrier) ctx.sync();
    auto r = ctx.template registers<lane_regs>();
    ctx.template ldmatrix<2, true>(a, r, [&](const thread_idx& t, lane_regs& x) {
      return matrix_row{t.x == p.bad_lane ? 32 * 8 : 8 * ((t.x + p.rotate) % 32), &x.t[0]};
    });
    ctx.threads([&](const thread_idx& t) {
      out.store(2 * t.x, r[t].t[0]);
      out.store(2 * t.x + 1, r[t].t[1]);
    });
  }
};

TEST(WarpOps, LdmatrixTransOnTheSimulatorChecksEachLanesRow) {
  memory m;
  auto out = m.alloc<uint32_t>("out", 64, fill::scratch);
  launch(m, ldmatrix_kernel{}, {out});
  EXPECT_EQ(m.log.oob_count, 0);
  EXPECT_EQ(m.log.races + m.log.uninitialized_reads, 0);
  const auto got = m.download(out);
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 2; ++i) {  // lanes 8i .. 8i + 7 name rows 8i .. : element (row, col) = 8 row + col
      const int g = l / 4, c = 2 * (l % 4);
      EXPECT_EQ(got[2 * l + i], pack(static_cast<uint16_t>(8 * (8 * i + c) + g),
                                     static_cast<uint16_t>(8 * (8 * i + c + 1) + g)))
          << "lane " << l << " matrix " << i;
    }

  memory m2;
  auto out2 = m2.alloc<uint32_t>("out", 64, fill::scratch);
  launch(m2, ldmatrix_kernel{}, {out2, 13});
  ASSERT_EQ(m2.log.oob_count, 8);  // the row's 8 elements, all lane 13's
  for (const auto& a : m2.log.oob) {
    EXPECT_EQ(a.buffer, "shared:tile");
    EXPECT_EQ(a.thread[0], 13);
  }

  memory m3;
  auto out3 = m3.alloc<uint32_t>("out", 64, fill::scratch);
  launch(m3, ldmatrix_kernel{}, {out3, -1, false, 1});
  EXPECT_EQ(m3.log.races, 16);  // lanes 0-15 name rows 1-16, each written by another thread

  memory m4;
  auto out4 = m4.alloc<uint32_t>("out", 64, fill::scratch);
  launch(m4, ldmatrix_kernel{}, {out4, -1, true, 1});
  EXPECT_EQ(m4.log.races, 0);
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
