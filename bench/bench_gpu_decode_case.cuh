// One decode shape on the device, for bench_gpu_decode.cu: random bf16 inputs made on the GPU
// (magnitudes in [1/16, 1) with random signs, as kernels/inputs.cpp draws them) in a paged KV cache
// of 16-token pages with a shuffled block table; per engine its plan (plan_triton + triton_uses_3d
// with thr = 16, plan_fi_decode with the H200 parameters), packaged exactly as the GPU target
// packages a run (targets/sim/package.hpp, targets/gpu/request.hpp) and placed in plain buffers
// (one cudaMalloc each) or a guarded arena (targets/gpu/memory); the family's launch plan
// (kernels/families.hpp) through the benchmark's own Launch policy; and the check against the fp32
// reference (kernels/reference) on sampled requests, every head, plus every output element written
// (the output is poisoned first).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"
#include "kernels/families.hpp"
#include "kernels/inputs.hpp"
#include "kernels/reference.hpp"
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

enum class variant { triton, fi };

// The second launch of a decode step (segment reduce, merge) is a programmatic dependent launch
// (targets/gpu/launch/dependent_launch.cuh): its blocks become resident while the kernel before it
// (the attention, or a guard check) ends and wait for it on the device, plain and guarded alike.
inline constexpr bool second_early = true;

// The benchmark's Launch policy: every body with the zero-cost context, the second launch early,
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

// One engine's launches on a case's inputs: the request (buffers, params with buffer ids), and
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
  // The launches of one decode step, on the plain buffers or in the guarded arena.
  void run(bool guarded, cudaStream_t s) {
    gpu::device_memory& m = memory(guarded, s);
    bench_launch launch{s, guarded ? &m : nullptr};
    std::visit([&](const auto& p) { launch_plan<bf16, head_dim>(launch, p); }, patched[guarded ? 1 : 0]);
  }
  // Poisons every scratch buffer (the output, the plan's buffers) of one memory.
  void poison(bool guarded, cudaStream_t s) {
    gpu::device_memory& m = memory(guarded, s);
    for (std::size_t i = 0; i < rq.buffers.size(); ++i)
      if (rq.buffers[i].scratch)
        HEADROOM_CUDA_TRY(
            cudaMemsetAsync(m.pointers()[i], 0xFF,
                            static_cast<std::size_t>(rq.buffers[i].extent * rq.buffers[i].elem_bytes), s));
  }
};

struct decode_case {
  int64_t batch_size = 0, ctx_len = 0;
  rank_layer layer{"model.layers.0.self_attn.attn", attn_kind::full, n_heads, n_kv, head_dim, head_dim, 0};
  batch b;
  attention_inputs<bf16> host;  // host copies of the inputs (the reference's)
  triton_plan tplan;
  fi_decode_plan fplan;
  variant_run runs[2];
  cudaStream_t stream = nullptr;

  variant_run& run_of(variant v) { return runs[static_cast<int>(v)]; }
  // Bytes a decode must move: every K and V byte once, q in, the output out.
  double bytes() const {
    return 2.0 * batch_size * ctx_len * n_kv * head_dim * sizeof(bf16) +
           2.0 * batch_size * n_heads * head_dim * sizeof(bf16);
  }
  std::string shape() const { return std::to_string(batch_size) + "x" + std::to_string(ctx_len); }
  std::string triton_path() const { return triton_uses_3d(tplan, b) ? "3d" : "2d"; }
  std::string fi_path() const { return fplan.split ? "split" : "nosplit"; }
};

// Random inputs of the shape, generated on the device and copied to the host.
inline attention_inputs<bf16> make_host_inputs(int64_t batch_size, int64_t ctx_len, cudaStream_t s) {
  attention_inputs<bf16> h;
  h.num_heads = n_heads, h.num_kv_heads = n_kv, h.head_size = head_dim, h.block_size = page;
  h.max_query_len = 1;
  h.max_blocks_per_seq = (ctx_len + page - 1) / page;
  const int64_t blocks = batch_size * h.max_blocks_per_seq, kv = blocks * page * n_kv * head_dim;
  std::vector<int32_t> perm(static_cast<std::size_t>(blocks));
  std::iota(perm.begin(), perm.end(), 0);
  splitmix64 rng{0x68656164726F6F6Dull ^ static_cast<uint64_t>(batch_size * 1000003 + ctx_len)};
  for (std::size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[rng.next() % i]);
  h.block_table = perm;  // request r owns pages r*mbs .. of the permutation
  h.seq_lens.assign(static_cast<std::size_t>(batch_size), static_cast<int32_t>(ctx_len));
  for (int64_t i = 0; i <= batch_size; ++i) h.query_start.push_back(static_cast<int32_t>(i));
  h.q.resize(static_cast<std::size_t>(batch_size * n_heads * head_dim));
  h.k_cache.resize(static_cast<std::size_t>(kv));
  h.v_cache.resize(static_cast<std::size_t>(kv));
  bf16* tmp = nullptr;
  HEADROOM_CUDA_TRY(cudaMalloc(&tmp, static_cast<std::size_t>(kv) * sizeof(bf16)));
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

// A plan packaged as the GPU target packages it: the request keeps the buffers' sizes; their bytes
// are dropped once both memories of the variant exist (device_memory needs only the sizes then).
inline void package(variant_run& run, const decode_case& c, const any_plan& plan) {
  sim::memory m;
  const auto in = upload_inputs(m, c.host);
  run.params = make_params(m, in, plan, c.layer, c.b);
  run.rq = gpu::to_request<bf16>(m, run.params);
}

inline std::unique_ptr<decode_case> make_case(int64_t batch_size, int64_t ctx_len, cudaStream_t s) {
  auto c = std::make_unique<decode_case>();
  c->batch_size = batch_size;
  c->ctx_len = ctx_len;
  c->stream = s;
  c->b = decode_batch(batch_size, ctx_len);
  c->tplan = plan_triton(n_heads, n_kv, head_dim, triton_options{});
  c->fplan = plan_fi_decode(n_heads, n_kv, head_dim, dtype::bf16, c->b, flashinfer_options{});
  c->host = make_host_inputs(batch_size, ctx_len, s);
  package(c->run_of(variant::triton), *c, c->tplan);
  package(c->run_of(variant::fi), *c, c->fplan);
  for (auto& r : c->runs) {
    r.memory(false, s), r.memory(true, s);
    for (auto& w : r.rq.buffers) w.data = {};
  }
  return c;
}

}  // namespace headroom::bench
