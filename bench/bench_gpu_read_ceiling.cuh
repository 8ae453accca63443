// Read ceilings of the paged KV cache, for bench_gpu_decode.cu: how fast the device can read every K
// and V byte of a decode case with no attention arithmetic at all, in two orders.
//   per_head  the engines' order: a block per (request, 256-key chunk, kv head), each warp 32 key
//             rows of that head, every load coalesced over whole rows and all issued before any
//             is used; rows of one head sit 2 KiB apart (the cache interleaves the 8 kv heads).
//   by_page   whole pages: a block per (request, 16 pages), the threads sweeping each page's 32 KiB
//             of K and of V contiguously; the best order this layout allows.
// The loaded words are folded into one value that is stored only if it equals a value it cannot
// take (bench_gpu_timing.cuh's keep), so nothing is dead code and nothing is written. Raw CUDA: a
// measuring instrument, not a kernel body under test.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "bench/bench_gpu_timing.cuh"  // fold, keep
#include "targets/gpu/launch/cuda_try.hpp"

namespace headroom::bench {

inline constexpr int read_chunk_keys = 256;  // keys per block of either order (16 pages)

// grid (requests * chunks, kv heads), 256 threads: warp w reads keys chunk * 256 + 32w .. + 31,
// coalesced: each load covers whole rows (D 128: 16 lanes per 256-byte row, two rows per load).
template <int D>
__global__ void __launch_bounds__(read_chunk_keys)
    read_per_head(const uint4* k, const uint4* v, const int32_t* bt, int64_t chunks, int64_t len, int64_t mbs,
                  int64_t kv, int64_t page, uint4* sink) {
  constexpr int W = D * 2 / 16;  // 16-byte words per row
  constexpr int R = 32 / W;      // rows per warp-wide load
  constexpr int N = 32 / R;      // loads per thread for the warp's 32 keys
  static_assert(W <= 32 && 32 % W == 0, "whole rows per warp-wide load");
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const int64_t seq = blockIdx.x / chunks, first = blockIdx.x % chunks * read_chunk_keys + 32 * warp;
  uint4 x[2 * N], acc{0, 0, 0, 0};
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int64_t key = first + i * R + lane / W;
    const int64_t row =
        key < len ? ((bt[seq * mbs + key / page] * page + key % page) * kv + blockIdx.y) * W : -1;
    x[i] = row >= 0 ? k[row + lane % W] : uint4{0, 0, 0, 0};
    x[N + i] = row >= 0 ? v[row + lane % W] : uint4{0, 0, 0, 0};
  }
#pragma unroll
  for (int i = 0; i < 2 * N; ++i) fold(acc, x[i]);
  keep(acc, sink);
}

// grid (requests * chunks), 256 threads: the chunk's 16 pages, each read whole (K then V).
template <int D>
__global__ void __launch_bounds__(read_chunk_keys)
    read_by_page(const uint4* k, const uint4* v, const int32_t* bt, int64_t chunks, int64_t len, int64_t mbs,
                 int64_t kv, int64_t page, uint4* sink) {
  const int64_t seq = blockIdx.x / chunks, first = blockIdx.x % chunks * read_chunk_keys;
  const int64_t words = page * kv * D * 2 / 16;  // 16-byte words per page
  uint4 acc{0, 0, 0, 0};
  for (int64_t p = first / page; p * page < len && p * page < first + read_chunk_keys; ++p) {
    const int64_t base = bt[seq * mbs + p] * words;
    constexpr int per = 8;  // words per thread per pass, all in flight
    for (int64_t w0 = 0; w0 < words; w0 += per * read_chunk_keys) {
      uint4 x[2 * per];
#pragma unroll
      for (int i = 0; i < per; ++i) {
        const int64_t w = w0 + i * read_chunk_keys + threadIdx.x;
        x[i] = w < words ? k[base + w] : uint4{0, 0, 0, 0};
        x[per + i] = w < words ? v[base + w] : uint4{0, 0, 0, 0};
      }
#pragma unroll
      for (int i = 0; i < 2 * per; ++i) fold(acc, x[i]);
    }
  }
  keep(acc, sink);
}

enum class read_order { per_head, by_page };

// One read of every K and V byte of the case, in `order`, on stream s.
template <int D>
void launch_read(read_order order, const void* k, const void* v, const int32_t* bt, int64_t batch,
                 int64_t len, int64_t mbs, int64_t kv, int64_t page, uint4* sink, cudaStream_t s) {
  const int64_t chunks = (len + read_chunk_keys - 1) / read_chunk_keys;
  const auto* kw = static_cast<const uint4*>(k);
  const auto* vw = static_cast<const uint4*>(v);
  if (order == read_order::per_head)
    read_per_head<D>
        <<<dim3(static_cast<unsigned>(batch * chunks), static_cast<unsigned>(kv)), read_chunk_keys, 0, s>>>(
            kw, vw, bt, chunks, len, mbs, kv, page, sink);
  else
    read_by_page<D><<<static_cast<unsigned>(batch * chunks), read_chunk_keys, 0, s>>>(kw, vw, bt, chunks, len,
                                                                                      mbs, kv, page, sink);
  HEADROOM_CUDA_TRY(cudaGetLastError());
}

}  // namespace headroom::bench
