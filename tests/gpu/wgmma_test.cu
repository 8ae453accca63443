// The warpgroup product on the device (targets/gpu/launch/wgmma.cuh) against the host's sum, for
// each shape and B layout the prefill tile pass uses: K-major B of 32 and 64 columns (the scores;
// products at 16-column offsets inside the 128-byte rows, and in the second column block), MN-major
// B of 64 and 128 columns (the values; column blocks lbo apart). B is placed with sw128_at and
// wgmma_b_at, the functions the simulator's emulation and the tile pass's copies use, so a
// descriptor that reads another layout fails here. Exit 77 without a device or without sm_90.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/numeric.hpp"
#include "targets/gpu/launch/wgmma.cuh"

namespace {

using headroom::bf16;
using headroom::sw128_at;
using headroom::wgmma_b_at;
using headroom::wgmma_operands;

constexpr int ks = 2;                     // products per call, accumulated
constexpr int smem_elems = 2 * 64 * 128;  // two column blocks of 64 rows

struct lane_regs {
  uint32_t a[ks][4];
  float d[64];
};

template <int N, bool MN>
__global__ void wgmma_kernel(const uint32_t* a, const bf16* b, int64_t b0, int64_t bstep, int64_t lbo,
                             float* d) {
  __shared__ __align__(1024) bf16 sb[smem_elems];
  for (int i = threadIdx.x; i < smem_elems; i += blockDim.x) sb[i] = b[i];
  headroom::gpu::async_proxy_fence();
  __syncthreads();
  lane_regs r;
  for (int s = 0; s < ks; ++s)
    for (int i = 0; i < 4; ++i) r.a[s][i] = a[(s * 128 + threadIdx.x) * 4 + i];
  for (int i = 0; i < N / 2; ++i) r.d[i] = 0.0f;
  headroom::gpu::wgmma_steps<bf16, N, MN, ks>(sb, lbo, r, [&](lane_regs& x, int s) {
    return wgmma_operands{{x.a[s][0], x.a[s][1], x.a[s][2], x.a[s][3]}, x.d, b0 + s * bstep};
  });
  headroom::gpu::wgmma_wait_pin<0>(r, [](lane_regs& x, auto pin) { pin(x.d); });
  for (int i = 0; i < N / 2; ++i) d[threadIdx.x * (N / 2) + i] = r.d[i];
}

float to_f(bf16 x) { return headroom::to_float(x); }

// One shape: random A (64 x 16 per product) and B; the device's D against the host's.
template <int N, bool MN>
bool check(int64_t b0, int64_t bstep, int64_t lbo, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  float A[ks][64][16], B[ks][16][N];
  std::vector<bf16> sb(smem_elems, headroom::from_float<bf16>(0.0f));
  for (int s = 0; s < ks; ++s) {
    for (auto& row : A[s])
      for (float& x : row) x = to_f(headroom::from_float<bf16>(u(rng)));
    for (int k = 0; k < 16; ++k)
      for (int n = 0; n < N; ++n) {
        const bf16 x = headroom::from_float<bf16>(u(rng));
        B[s][k][n] = to_f(x);
        sb[sw128_at(wgmma_b_at<MN>(b0 + s * bstep, lbo, k, n))] = x;
      }
  }
  // A in mma's A layout: warp w rows 16w .., lane (g, q).
  std::vector<uint32_t> a(ks * 128 * 4);
  const auto pk = [&](int s, int row, int col) {
    return static_cast<uint32_t>(headroom::from_float<bf16>(A[s][row][col]).bits) |
           static_cast<uint32_t>(headroom::from_float<bf16>(A[s][row][col + 1]).bits) << 16;
  };
  for (int s = 0; s < ks; ++s)
    for (int t = 0; t < 128; ++t) {
      const int w = t / 32, g = (t % 32) / 4, q = t % 4, r0 = 16 * w + g;
      uint32_t* x = &a[(s * 128 + t) * 4];
      x[0] = pk(s, r0, 2 * q), x[1] = pk(s, r0 + 8, 2 * q), x[2] = pk(s, r0, 2 * q + 8),
      x[3] = pk(s, r0 + 8, 2 * q + 8);
    }
  uint32_t* da;
  bf16* db;
  float* dd;
  cudaMalloc(&da, a.size() * 4);
  cudaMalloc(&db, smem_elems * sizeof(bf16));
  cudaMalloc(&dd, 128 * (N / 2) * sizeof(float));
  cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(db, sb.data(), smem_elems * sizeof(bf16), cudaMemcpyHostToDevice);
  wgmma_kernel<N, MN><<<1, 128>>>(da, db, b0, bstep, lbo, dd);
  std::vector<float> d(128 * (N / 2));
  const cudaError_t e = cudaMemcpy(d.data(), dd, d.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(da), cudaFree(db), cudaFree(dd);
  if (e != cudaSuccess) {
    std::printf("N %d %s: %s\n", N, MN ? "MN-major" : "K-major", cudaGetErrorString(e));
    return false;
  }
  int bad = 0;
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < N / 2; ++i) {
      const int w = t / 32, g = (t % 32) / 4, q = t % 4;
      const int row = 16 * w + g + 8 * ((i % 4) / 2), col = 8 * (i / 4) + 2 * q + i % 2;
      float ref = 0.0f;
      for (int s = 0; s < ks; ++s)
        for (int k = 0; k < 16; ++k) ref += A[s][row][k] * B[s][k][col];
      if (std::abs(d[t * (N / 2) + i] - ref) > 1e-3f * (1.0f + std::abs(ref)) && bad++ < 4)
        std::printf("N %d %s: D[%d][%d] = %g, host %g\n", N, MN ? "MN-major" : "K-major", row, col,
                    d[t * (N / 2) + i], ref);
    }
  std::printf("N %d %s (b %lld, step %lld, lbo %lld): %s\n", N, MN ? "MN-major" : "K-major",
              static_cast<long long>(b0), static_cast<long long>(bstep), static_cast<long long>(lbo),
              bad ? "FAILED" : "ok");
  return bad == 0;
}

}  // namespace

int main() {
  int n = 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  if (prop.major != 9 || !headroom::gpu::gpu_has_wgmma) {
    std::printf("sm_%d%d: wgmma needs sm_90a: skipped\n", prop.major, prop.minor);
    return 77;
  }
  std::mt19937 rng(7);
  bool ok = true;
  // The scores: K rows of 64 elements, products 16 columns apart in a row, then the second block
  // of 64 dims (4096 elements on); the values: rows of keys, 16 keys a product, blocks lbo apart.
  ok &= check<64, false>(0, 16, 0, rng);
  ok &= check<64, false>(32, 4096 - 32 + 16, 0, rng);
  ok &= check<32, false>(4096 + 16, 16, 0, rng);
  ok &= check<64, true>(0, 1024, 4096, rng);
  ok &= check<128, true>(1024, 1024, 4096, rng);
  return ok ? 0 : 1;
}
