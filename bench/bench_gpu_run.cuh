// What the GPU benchmarks run (bench_gpu_decode.cu, bench_gpu_prefill.cu): the shape's constants,
// random bf16 inputs made on the GPU (magnitudes in [1/16, 1) with random signs, as
// kernels/inputs.cpp draws them) in a paged KV cache of 16-token pages with a shuffled block table;
// a plan packaged exactly as the GPU target packages a run (targets/sim/package.hpp,
// targets/gpu/request.hpp) and placed in plain buffers (one cudaMalloc each) or a guarded arena
// (targets/gpu/memory); the family's launch plan (kernels/families.hpp) through the benchmarks' own
// Launch policy; and the output read back with every element checked written (scratch is poisoned
// first).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/families.hpp"
#include "kernels/inputs.hpp"
#include "targets/gpu/launch/cuda_try.hpp"
#include "targets/gpu/launch/gpu_context.cuh"
#include "targets/gpu/launch/launch.cuh"
#include "targets/gpu/memory/device_memory.hpp"
#include "targets/gpu/request.hpp"

namespace headroom::bench {

inline constexpr int64_t n_heads = 64, n_kv = 8, head_dim = 128, page = 16;

// splitmix64 finaliser of (seed, i): the device's input generator.
__global__ void fill_values_kernel(bf16* p, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    uint64_t z = seed + static_cast<uint64_t>(i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    const uint32_t bits = static_cast<uint32_t>(z ^ (z >> 31));
    const float mag = 0.0625f + 0.9375f * static_cast<float>(bits >> 9) * (1.0f / 8388608.0f);
    p[i] = from_float<bf16>(bits & 1u ? mag : -mag);
  }
}

// Random inputs of `batch_size` requests, each with kv_len tokens of which the last q_len are new
// (decode: q_len 1), generated on the device and copied to the host.
inline attention_inputs<bf16> make_host_inputs(int64_t batch_size, int64_t kv_len, int64_t q_len,
                                               cudaStream_t s) {
  attention_inputs<bf16> h;
  h.num_heads = n_heads, h.num_kv_heads = n_kv, h.head_size = head_dim, h.block_size = page;
  h.max_query_len = q_len;
  h.max_blocks_per_seq = (kv_len + page - 1) / page;
  const int64_t blocks = batch_size * h.max_blocks_per_seq, kv = blocks * page * n_kv * head_dim;
  std::vector<int32_t> perm(static_cast<std::size_t>(blocks));
  std::iota(perm.begin(), perm.end(), 0);
  splitmix64 rng{0x68656164726F6F6Dull ^
                 static_cast<uint64_t>(batch_size * 1000003 + kv_len + (q_len - 1) * 7919)};
  for (std::size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[rng.next() % i]);
  h.block_table = perm;  // request r owns pages r*mbs .. of the permutation
  h.seq_lens.assign(static_cast<std::size_t>(batch_size), static_cast<int32_t>(kv_len));
  for (int64_t i = 0; i <= batch_size; ++i) h.query_start.push_back(static_cast<int32_t>(i * q_len));
  h.q.resize(static_cast<std::size_t>(batch_size * q_len * n_heads * head_dim));
  h.k_cache.resize(static_cast<std::size_t>(kv));
  h.v_cache.resize(static_cast<std::size_t>(kv));
  bf16* tmp = nullptr;
  const std::size_t most = std::max(h.q.size(), h.k_cache.size());
  HEADROOM_CUDA_TRY(cudaMalloc(&tmp, most * sizeof(bf16)));
  uint64_t seed = 1;
  for (auto* v : {&h.q, &h.k_cache, &h.v_cache}) {
    fill_values_kernel<<<1024, 256, 0, s>>>(tmp, static_cast<int64_t>(v->size()), 0x1234567ull * seed++);
    HEADROOM_CUDA_TRY(cudaGetLastError());
    HEADROOM_CUDA_TRY(cudaMemcpyAsync(v->data(), tmp, v->size() * sizeof(bf16), cudaMemcpyDeviceToHost, s));
    HEADROOM_CUDA_TRY(cudaStreamSynchronize(s));
  }
  cudaFree(tmp);
  return h;
}

// The second launch of a step (segment reduce, merge) is a programmatic dependent launch
// (targets/gpu/launch/dependent_launch.cuh): its blocks become resident while the kernel before it
// (the attention, or a guard check) ends and wait for it on the device, plain and guarded alike.
inline constexpr bool second_early = true;

// The benchmarks' Launch policy: every body with the zero-cost context, the second launch early,
// and in a guarded arena the band check behind each launch (as the GPU target's worker does).
struct bench_launch {
  cudaStream_t stream;
  gpu::device_memory* guarded = nullptr;
  int k = 0;
  template <class K>
  void run(const typename K::params& p) {
    gpu::launch_body<K, gpu::gpu_context>(p, {}, stream, second_early && k > 0);
    if (guarded) guarded->check_guards(k);
    ++k;
  }
};

// One family's launches on a case's inputs: the request (buffers, params with buffer ids), and
// the params patched for each memory that holds its buffers.
struct variant_run {
  gpu::gpu_request rq;
  family_params<bf16> params;
  std::unique_ptr<gpu::device_memory> mem[2];  // plain, guarded (made on first use)
  family_params<bf16> patched[2];

  int32_t id_of(const char* name) const {
    for (std::size_t i = 0; i < rq.buffers.size(); ++i)
      if (rq.buffers[i].name == name) return static_cast<int32_t>(i);
    return -1;
  }
  gpu::device_memory& memory(bool guarded, cudaStream_t s) {
    auto& m = mem[guarded ? 1 : 0];
    if (!m) {
      m = std::make_unique<gpu::device_memory>(rq.buffers, guarded, gpu::guard_options{}, s);
      HEADROOM_CUDA_TRY(cudaStreamSynchronize(s));
      auto& p = patched[guarded ? 1 : 0];
      p = params;
      std::visit(
          [&](auto& x) {
            patch_refs(x, [&](const auto& r) { return m->pointers()[static_cast<std::size_t>(r.id)]; });
          },
          p);
    }
    return *m;
  }
  // The launches of one step, on the plain buffers or in the guarded arena.
  void run(bool guarded, cudaStream_t s) {
    gpu::device_memory& m = memory(guarded, s);
    bench_launch launch{s, guarded ? &m : nullptr};
    std::visit([&](const auto& p) { launch_plan<bf16, head_dim>(launch, p); }, patched[guarded ? 1 : 0]);
  }
  // Poisons every scratch buffer (the output, the plan's buffers) of one memory: 0xFF bytes, a NaN
  // in bf16 and fp32; past its host-written prefix (a planner's work list keeps its entries).
  void poison(bool guarded, cudaStream_t s) {
    gpu::device_memory& m = memory(guarded, s);
    for (std::size_t i = 0; i < rq.buffers.size(); ++i) {
      const auto bytes = static_cast<std::size_t>(rq.buffers[i].extent * rq.buffers[i].elem_bytes);
      const std::size_t from = i < prefix.size() ? prefix[i] : 0;
      if (rq.buffers[i].scratch && bytes > from)
        HEADROOM_CUDA_TRY(
            cudaMemsetAsync(static_cast<std::byte*>(m.pointers()[i]) + from, 0xFF, bytes - from, s));
    }
  }
  // Makes both memories, then drops the request's bytes (device_memory needs only the sizes now;
  // poison the length of each scratch buffer's host-written prefix).
  void place(cudaStream_t s) {
    memory(false, s), memory(true, s);
    prefix.clear();
    for (auto& w : rq.buffers) prefix.push_back(w.scratch ? w.data.size() : 0), w.data = {};
  }
  std::vector<std::size_t> prefix;  // per buffer: bytes of a scratch buffer the host wrote
};

// A plan packaged as the GPU target packages it.
inline void package(variant_run& run, const attention_inputs<bf16>& host, const any_plan& plan,
                    const rank_layer& layer, const batch& b) {
  sim::memory m;
  const auto in = upload_inputs(m, host);
  run.params = make_params(m, in, plan, layer, b);
  run.rq = gpu::to_request<bf16>(m, run.params);
}

// The output of one memory as floats; `unwritten` is the index of the first element still NaN
// poison, -1 when every element was written.
inline std::vector<float> download_output(variant_run& run, bool guarded, cudaStream_t s,
                                          int64_t& unwritten) {
  const auto bytes = run.memory(guarded, s).download(run.id_of(output_buffer_name));
  std::vector<float> out(bytes.size() / sizeof(bf16));
  unwritten = -1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    bf16 x;
    std::memcpy(&x, bytes.data() + i * sizeof(bf16), sizeof(x));
    out[i] = to_float(x);
    if (unwritten < 0 && !std::isfinite(out[i])) unwritten = static_cast<int64_t>(i);
  }
  return out;
}

}  // namespace headroom::bench
