// Host emulation of the warp collectives of the context interface (context.hpp), shared by the
// simulator and the native context: butterfly reductions over lane groups (__shfl_xor_sync), the
// tensor-core product mma.sync.m16n8k16 (bf16 / fp16 in, fp32 accumulate) and the 8x8 transpose
// movmatrix.sync.m8n8.trans.b16. The fragment layouts are PTX's (ISA, "Matrix fragments for
// mma.m16n8k16 with floating point type"); for lane l, g = l / 4 and q = l % 4:
//   A (16x16, row-major), 4 registers of two 16-bit elements, low half first:
//     a0 = A[g][2q..2q+1]   a1 = A[g+8][2q..2q+1]   a2 = A[g][2q+8..2q+9]   a3 = A[g+8][2q+8..2q+9]
//   B (16x8, k x n), 2 registers:  b0 = B[2q..2q+1][g]   b1 = B[2q+8..2q+9][g]
//   C, D (16x8, fp32):  c0, c1 = C[g][2q], C[g][2q+1]   c2, c3 = C[g+8][2q], C[g+8][2q+1]
//   8x8 matrix of movmatrix: lane l holds M[g][2q..2q+1]; afterwards it holds M^T[g][2q..2q+1].
//   wgmma m64nNk16 (per warpgroup of 4 warps): warp w's lanes hold rows 16w .. 16w + 15 of A and D in
//   the layouts above, D repeated for each 8 columns (d[4j + c] is c of columns 8j .. 8j + 7).
//   ldmatrix.trans (x N): lane 8i + r names row r of matrix i (8 16-bit elements, 16 bytes) and gets
//   in register i M_i^T[g][2q..2q+1] = M_i[2q][g], M_i[2q+1][g]: the B operand of mma when row r of
//   M_i is key r of a K-by-dims tile (V of P V).
// The emulated product sums the 16 exact products in k order in fp32, then adds C: the tensor core
// adds in an order of its own, so sim and GPU results may differ in the last bits (the kernels'
// outputs are compared within tolerance, never bitwise).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/sim/device_types.hpp"

namespace headroom::sim {

inline constexpr int warp_lanes = 32;

// Butterfly over lane groups: offsets width/2 * stride, ..., stride (xor), op applied pairwise; every
// member of a group ends with the group's result, in __shfl_xor_sync's order. (Maxima use
// std::fmax, IEEE maxNum like the GPU's fmaxf: symmetric, a NaN loses.)
template <class Regs, class Op>
void lane_butterfly(Regs r, int nthreads, int width, int stride, Op op) {
  for (int off = width / 2 * stride; off >= stride; off /= 2)
    for (int i = 0; i < nthreads; ++i) {
      if (i & off) continue;
      auto& x = r.p[i];
      auto& y = r.p[i + off];
      for (int k = 0; k < static_cast<int>(sizeof(x.v) / sizeof(x.v[0])); ++k)
        x.v[k] = y.v[k] = op(x.v[k], y.v[k]);
    }
}

// One 16-bit element of a register: element e (0 = low half).
inline uint16_t half_of(uint32_t reg, int e) { return static_cast<uint16_t>(reg >> (16 * e)); }

template <class T>
float element_value(uint32_t reg, int e) {
  return to_float(T{half_of(reg, e)});  // found by argument-dependent lookup (kernels/numeric.hpp)
}

// Lane l's four A registers (mma's A layout) into the warp's 16 x 16 A.
template <class T>
void lane_a(const uint32_t (&a)[4], int l, float (&A)[16][16]) {
  const int g = l / 4, q = l % 4;
  for (int e = 0; e < 2; ++e) {
    A[g][2 * q + e] = element_value<T>(a[0], e);
    A[g + 8][2 * q + e] = element_value<T>(a[1], e);
    A[g][2 * q + 8 + e] = element_value<T>(a[2], e);
    A[g + 8][2 * q + 8 + e] = element_value<T>(a[3], e);
  }
}

// D = A * B + C for every warp of the block; sel(R&) -> mma_operands for that lane.
template <class T, class Regs, class Sel>
void emulate_mma(Regs r, int nthreads, Sel sel) {
  for (int w = 0; w + warp_lanes <= nthreads; w += warp_lanes) {
    float A[16][16], B[16][8];
    float* C[warp_lanes];
    for (int l = 0; l < warp_lanes; ++l) {
      const mma_operands o = sel(r.p[w + l]);
      const int g = l / 4, q = l % 4;
      lane_a<T>(o.a, l, A);
      for (int e = 0; e < 2; ++e) {
        B[2 * q + e][g] = element_value<T>(o.b[0], e);
        B[2 * q + 8 + e][g] = element_value<T>(o.b[1], e);
      }
      C[l] = o.c;
    }
    float D[16][8];
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        float s = 0.0f;
        for (int k = 0; k < 16; ++k) s += A[i][k] * B[k][j];
        D[i][j] = s;
      }
    for (int l = 0; l < warp_lanes; ++l) {
      const int g = l / 4, q = l % 4;
      C[l][0] += D[g][2 * q];
      C[l][1] += D[g][2 * q + 1];
      C[l][2] += D[g + 8][2 * q];
      C[l][3] += D[g + 8][2 * q + 1];
    }
  }
}

// B of a wgmma (16 x N) from view v as 16-byte loads: K-major, 8 k of row n a load; MN-major, 8 n of
// row k (wgmma_b_at, then sw128_at).
template <bool MN, int N, class View>
void read_wgmma_b(const View& v, int64_t b, int64_t lbo, float (&B)[16][N]) {
  for (int x = 0; x < (MN ? 16 : N); ++x)
    for (int y = 0; y < (MN ? N : 16); y += 8) {
      const int k = MN ? x : y, n = MN ? y : x;
      const auto e = v.template load_vec_aligned<8>(sw128_at(wgmma_b_at<MN>(b, lbo, k, n)));
      for (int i = 0; i < 8; ++i) (MN ? B[k][n + i] : B[k + i][n]) = to_float(e[i]);
    }
}

// ctx.wgmma (m64nNk16) for every warpgroup (4 warps) of the block, KS products accumulated in
// order: sel(R&, s) -> the lane's wgmma_operands of product s; B (16 x N) is read from view v at the
// warpgroup's b (its first lane's). Each warp's 16 rows sum their 16 exact products in k order and
// then add D, as emulate_mma does.
template <class T, int N, bool MN, int KS, class Regs, class View, class Sel>
void emulate_wgmma(Regs r, int nthreads, const View& v, int64_t lbo, Sel sel) {
  constexpr int group = 4 * warp_lanes;
  for (int w0 = 0; w0 + group <= nthreads; w0 += group)
    for (int s = 0; s < KS; ++s) {
      float B[16][N];
      read_wgmma_b<MN>(v, sel(r.p[w0], s).b, lbo, B);
      for (int w = w0; w < w0 + group; w += warp_lanes) {
        float A[16][16];
        float* D[warp_lanes];
        for (int l = 0; l < warp_lanes; ++l) {
          const wgmma_operands o = sel(r.p[w + l], s);
          lane_a<T>(o.a, l, A);
          D[l] = o.d;
        }
        for (int i = 0; i < 16; ++i) {
          float x[N] = {};  // row i of A B: each element's products added in k order, k outermost
          for (int k = 0; k < 16; ++k) {
            const float a = A[i][k];
            for (int j = 0; j < N; ++j) x[j] += a * B[k][j];
          }
          for (int j = 0; j < N; ++j) D[4 * (i % 8) + (j % 8) / 2][4 * (j / 8) + 2 * (i / 8) + j % 2] += x[j];
        }
      }
    }
}

// Transposes N independent 8x8 matrices of 16-bit elements per warp; sel(R&) -> uint32_t* to the
// lane's N consecutive registers (matrix i in register i), transposed in place.
template <int N, class Regs, class Sel>
void emulate_transpose8x8(Regs r, int nthreads, Sel sel) {
  for (int w = 0; w + warp_lanes <= nthreads; w += warp_lanes)
    for (int i = 0; i < N; ++i) {
      uint16_t M[8][8];
      uint32_t* reg[warp_lanes];
      for (int l = 0; l < warp_lanes; ++l) {
        reg[l] = sel(r.p[w + l]) + i;
        for (int e = 0; e < 2; ++e) M[l / 4][2 * (l % 4) + e] = half_of(*reg[l], e);
      }
      for (int l = 0; l < warp_lanes; ++l) {
        const int g = l / 4, c = 2 * (l % 4);
        *reg[l] = static_cast<uint32_t>(M[c][g]) | static_cast<uint32_t>(M[c + 1][g]) << 16;
      }
    }
}

// ldmatrix's distribution for one warp: rows[8i + r] is row r of matrix i (as the lanes named
// them), dst[l] lane l's N registers (register i: matrix i). Lane l = 4g + q gets elements (g, 2q)
// and (g, 2q + 1) of each matrix, or with Trans (ldmatrix.trans) of its transpose.
template <int N, bool Trans>
void ldmatrix_lanes(const uint16_t (&rows)[warp_lanes][8], uint32_t* const (&dst)[warp_lanes]) {
  static_assert(N == 1 || N == 2 || N == 4, "ldmatrix loads 1, 2 or 4 matrices");
  for (int l = 0; l < warp_lanes; ++l) {
    const int g = l / 4, c = 2 * (l % 4);
    for (int i = 0; i < N; ++i) {
      const uint16_t lo = Trans ? rows[8 * i + c][g] : rows[8 * i + g][c];
      const uint16_t hi = Trans ? rows[8 * i + c + 1][g] : rows[8 * i + g][c + 1];
      dst[l][i] = static_cast<uint32_t>(lo) | static_cast<uint32_t>(hi) << 16;
    }
  }
}

// ldmatrix[.trans] over a block of `block` threads, warp by warp: lane(t, R&, rows) reads the lane's
// 16-byte row into rows (only for the lanes 8N names) and returns where its registers go.
template <int N, bool Trans, class Regs, class Lane>
void emulate_ldmatrix(launch_dim block, Regs r, Lane lane) {
  uint16_t rows[warp_lanes][8] = {};
  uint32_t* dst[warp_lanes];
  thread_idx t;
  for (t.z = 0; t.z < block.z; ++t.z)
    for (t.y = 0; t.y < block.y; ++t.y)
      for (t.x = 0; t.x < block.x; ++t.x, ++t.linear) {
        const int l = static_cast<int>(t.linear % warp_lanes);
        dst[l] = lane(static_cast<const thread_idx&>(t), r.p[t.linear], l < 8 * N ? rows[l] : nullptr);
        if (l == warp_lanes - 1) ldmatrix_lanes<N, Trans>(rows, dst);
      }
}

}  // namespace headroom::sim
