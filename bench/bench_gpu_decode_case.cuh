// One decode shape on the device, for bench_gpu_decode.cu: random bf16 inputs made on the GPU
// (magnitudes in [1/16, 1) with random signs, as kernels/inputs.cpp draws them) in a paged KV cache
// of 16-token pages with a shuffled block table; the engine's plans (plan_triton + triton_uses_3d
// with thr = 16, plan_fi_decode with the H200 parameters) and each kernel's params; plain buffers
// (cudaMalloc) or a guarded arena (kernels/gpu/device_memory); the launches; and the check against
// the fp32 reference (kernels/reference) on sampled requests, every head, plus every output element
// written (the output is poisoned with NaN first).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"
#include "kernels/fi_decode.hpp"
#include "kernels/gpu/cuda_try.hpp"
#include "kernels/gpu/device_memory.hpp"
#include "kernels/gpu/gpu_context.cuh"
#include "kernels/gpu/launch.cuh"
#include "kernels/inputs.hpp"
#include "kernels/reference.hpp"
#include "kernels/sim_runs.hpp"
#include "kernels/triton_attention.hpp"

#ifndef HEADROOM_ATTN_WARPS  // the old bodies (baseline builds) have no such knob
#define HEADROOM_ATTN_WARPS 8
#endif

namespace headroom::bench {

inline constexpr int64_t n_heads = 64, n_kv = 8, head_dim = 128, page = 16;

// splitmix64 finaliser of (seed, i): the device's input generator.
__global__ void fill_values_kernel(bf16* p, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    uint64_t z = seed + static_cast<uint64_t>(i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    const uint32_t bits = static_cast<uint32_t>(z ^ (z >> 31));
    const float mag = 0.0625f + 0.9375f * static_cast<float>(bits >> 9) * (1.0f / 8388608.0f);
    p[i] = from_float<bf16>(bits & 1u ? mag : -mag);
  }
}

// Buffer ids of a case, the order of its wire_buffers (guarded runs) and of its plain allocations.
enum buf_id { b_q, b_k, b_v, b_bt, b_lens, b_qs, b_out, b_segm_o, b_segm_m, b_segm_e, b_ri, b_ki, b_oi,
              b_tmp_v, b_tmp_s, b_count };

enum class variant { triton, fi };

// The buffers one variant's launches use: the inputs, the output and its engine's plan buffers,
// what the GPU lane's request for that engine carries (and so what its guarded arena holds).
inline std::vector<buf_id> variant_buffers(variant v) {
  if (v == variant::triton) return {b_q, b_k, b_v, b_bt, b_lens, b_qs, b_out, b_segm_o, b_segm_m, b_segm_e};
  return {b_q, b_k, b_v, b_bt, b_lens, b_qs, b_out, b_ri, b_ki, b_oi, b_tmp_v, b_tmp_s};
}

// Device buffers for some of a case's buffer ids (of its wire buffers, which must outlive them):
// plain allocations or one guarded arena.
struct case_memory {
  std::array<int, b_count> slot{};  // buf_id -> index among mem's buffers, -1 when absent
  std::unique_ptr<gpu::device_memory> mem;
  void* ptr(buf_id id) const { return slot[id] < 0 ? nullptr : mem->pointers()[static_cast<std::size_t>(slot[id])]; }
};

inline std::unique_ptr<case_memory> make_memory(const std::vector<gpu::wire_buffer>& all, const std::vector<buf_id>& ids,
                                                bool guarded, cudaStream_t s) {
  auto m = std::make_unique<case_memory>();
  m->slot.fill(-1);
  std::vector<const gpu::wire_buffer*> bufs;
  for (buf_id id : ids) {
    m->slot[id] = static_cast<int>(bufs.size());
    bufs.push_back(&all[id]);
  }
  m->mem = std::make_unique<gpu::device_memory>(std::move(bufs), guarded, gpu::guard_options{}, s);
  HEADROOM_CUDA_TRY(cudaStreamSynchronize(s));
  return m;
}

struct decode_case {
  int64_t batch_size = 0, ctx_len = 0;
  rank_layer layer{"model.layers.0.self_attn.attn", attn_kind::full, n_heads, n_kv, head_dim, head_dim, 0};
  batch b;
  attention_inputs<bf16> host;   // host copies of the inputs (the reference's)
  std::vector<gpu::wire_buffer> bufs;
  triton_plan tplan;
  bool uses_3d = false;
  fi_decode_plan fplan;
  std::unique_ptr<case_memory> plain;       // every buffer, one allocation each
  std::unique_ptr<case_memory> guarded[2];  // per variant: its buffers in a guarded arena
  cudaStream_t stream = nullptr;

  // Bytes a decode must move: every K and V byte once, q in, the output out.
  double bytes() const {
    return 2.0 * batch_size * ctx_len * n_kv * head_dim * sizeof(bf16) +
           2.0 * batch_size * n_heads * head_dim * sizeof(bf16);
  }
  std::string shape() const { return std::to_string(batch_size) + "x" + std::to_string(ctx_len); }
  std::string triton_path() const { return uses_3d ? "3d" : "2d"; }
  std::string fi_path() const { return fplan.split ? "split" : "nosplit"; }
};

template <class T>
gpu::wire_buffer wire(const char* name, const std::vector<T>& v) {
  gpu::wire_buffer w{name, sizeof(T), static_cast<int64_t>(v.size()), false, {}};
  w.data.resize(v.size() * sizeof(T));
  std::memcpy(w.data.data(), v.data(), w.data.size());
  return w;
}
inline gpu::wire_buffer scratch(const char* name, int64_t elem_bytes, int64_t extent) {
  return {name, elem_bytes, std::max<int64_t>(extent, 1), true, {}};
}
inline int64_t plan_elems(const std::vector<buffer_plan>& bs, const char* name) {
  const buffer_plan* p = find_buffer(bs, name);
  return p ? p->capacity_elems() : 1;
}

inline std::unique_ptr<decode_case> make_case(int64_t batch_size, int64_t ctx_len, cudaStream_t s) {
  auto c = std::make_unique<decode_case>();
  c->batch_size = batch_size;
  c->ctx_len = ctx_len;
  c->stream = s;
  c->b = decode_batch(batch_size, ctx_len);
  c->tplan = plan_triton(n_heads, n_kv, head_dim, triton_options{});
  c->uses_3d = triton_uses_3d(c->tplan, c->b);
  c->fplan = plan_fi_decode(n_heads, n_kv, head_dim, dtype::bf16, c->b, flashinfer_options{});
  auto& h = c->host;
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
  auto& w = c->bufs;
  w.resize(b_count);
  w[b_q] = wire("q", h.q), w[b_k] = wire("k_cache", h.k_cache), w[b_v] = wire("v_cache", h.v_cache);
  w[b_bt] = wire("block_table", h.block_table), w[b_lens] = wire("seq_lens", h.seq_lens);
  w[b_qs] = wire("query_start", h.query_start);
  w[b_out] = scratch("output", sizeof(bf16), static_cast<int64_t>(h.q.size()));
  w[b_segm_o] = scratch("segm_output", 4, plan_elems(c->tplan.buffers, "segm_output"));
  w[b_segm_m] = scratch("segm_max", 4, plan_elems(c->tplan.buffers, "segm_max"));
  w[b_segm_e] = scratch("segm_expsum", 4, plan_elems(c->tplan.buffers, "segm_expsum"));
  w[b_ri] = wire("request_indices", c->fplan.request_indices);
  w[b_ki] = wire("kv_tile_indices", c->fplan.kv_tile_indices);
  w[b_oi] = wire("o_indptr", c->fplan.o_indptr);
  w[b_tmp_v] = scratch("tmp_v", sizeof(bf16), plan_elems(c->fplan.buffers, "tmp_v"));
  w[b_tmp_s] = scratch("tmp_s", 4, plan_elems(c->fplan.buffers, "tmp_s"));
  std::vector<buf_id> all;
  for (int id = 0; id < b_count; ++id) all.push_back(static_cast<buf_id>(id));
  c->plain = make_memory(w, all, false, s);
  return c;
}

// A variant's guarded arena, made on first use (the wire buffers keep their bytes until both are).
inline case_memory& guarded_memory(decode_case& c, variant v) {
  auto& g = c.guarded[static_cast<int>(v)];
  if (!g) {
    g = make_memory(c.bufs, variant_buffers(v), true, c.stream);
    if (c.guarded[0] && c.guarded[1])
      for (auto& x : c.bufs) x.data = {};
  }
  return *g;
}

template <class T>
buffer_ref<T> ref(const case_memory& m, const decode_case& c, buf_id id) {
  return {static_cast<T*>(m.ptr(id)), c.bufs[id].extent, id};
}

inline paged_attention_inputs<bf16> inputs(const case_memory& m, const decode_case& c) {
  paged_attention_inputs<bf16> in;
  in.q = ref<const bf16>(m, c, b_q), in.k_cache = ref<const bf16>(m, c, b_k), in.v_cache = ref<const bf16>(m, c, b_v);
  in.block_table = ref<const int32_t>(m, c, b_bt), in.seq_lens = ref<const int32_t>(m, c, b_lens);
  in.query_start = ref<const int32_t>(m, c, b_qs);
  in.num_seqs = in.num_tokens = c.batch_size;
  in.num_heads = n_heads, in.num_kv_heads = n_kv, in.head_size = head_dim;
  in.block_size = page, in.max_blocks_per_seq = c.host.max_blocks_per_seq, in.max_query_len = 1;
  in.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  return in;
}

inline triton_params<bf16> triton_for(const case_memory& m, const decode_case& c) {
  triton_params<bf16> p;
  p.in = inputs(m, c);
  p.output = ref<bf16>(m, c, b_out);
  const triton_shape sh = triton_launch_shape(c.layer, c.b);
  p.block_m = sh.block_m, p.block_q = sh.block_q, p.head_size_padded = head_dim;
  p.rows_per_pass = rows_per_pass(std::min<int64_t>(p.block_q, 1) * (n_heads / n_kv), head_dim);
  if (c.uses_3d) {
    p.segm_output = ref<float>(m, c, b_segm_o), p.segm_max = ref<float>(m, c, b_segm_m);
    p.segm_expsum = ref<float>(m, c, b_segm_e);
  }
  return p;
}

inline fi_decode_params<bf16> fi_for(const case_memory& m, const decode_case& c) {
  fi_decode_params<bf16> p;
  p.in = inputs(m, c);
  p.output = ref<bf16>(m, c, b_out);
  p.request_indices = ref<const int32_t>(m, c, b_ri), p.kv_tile_indices = ref<const int32_t>(m, c, b_ki);
  p.o_indptr = ref<const int32_t>(m, c, b_oi);
  p.padded = c.fplan.padded, p.num_work = c.fplan.num_work, p.split = c.fplan.split;
  p.chunk_tokens = c.fplan.chunk_pages * c.fplan.page_size;
  p.rows_per_pass = rows_per_pass(n_heads / n_kv, head_dim);
  if (p.split) p.tmp_v = ref<bf16>(m, c, b_tmp_v), p.tmp_s = ref<float>(m, c, b_tmp_s);
  return p;
}

// The second launch of a decode step (segment reduce, merge) is a programmatic dependent launch
// (kernels/gpu/dependent_launch.cuh): its blocks become resident while the kernel before it (the
// attention, or a guard check) ends and wait for it on the device, plain and guarded alike.
inline constexpr bool second_early = true;

// The engine's launches for one decode step; `after(k)` runs after launch k (guard checks).
template <class After>
void run_triton(const case_memory& m, const decode_case& c, After&& after) {
  using gpu::gpu_context;
  const auto p = triton_for(m, c);
  if (c.uses_3d) {
    gpu::launch_body<triton_attention<bf16, head_dim, true>, gpu_context>(p, {}, c.stream);
    after(0);
    gpu::launch_body<triton_segment_reduce<bf16, head_dim>, gpu_context>(p, {}, c.stream, second_early);
    after(1);
  } else {
    gpu::launch_body<triton_attention<bf16, head_dim, false>, gpu_context>(p, {}, c.stream);
    after(0);
  }
}

template <class After>
void run_fi(const case_memory& m, const decode_case& c, After&& after) {
  using gpu::gpu_context;
  const auto p = fi_for(m, c);
  gpu::launch_body<fi_batch_decode<bf16, head_dim>, gpu_context>(p, {}, c.stream);
  after(0);
  if (p.split) {
    gpu::launch_body<fi_merge_states<bf16, head_dim>, gpu_context>(p, {}, c.stream, second_early);
    after(1);
  }
}

}  // namespace headroom::bench
