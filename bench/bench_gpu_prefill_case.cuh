// One causal prefill shape on the device, for bench_gpu_prefill.cu: `batch_size` requests of q_len
// new tokens and no earlier context (kv_len = q_len), inputs made on the GPU (bench_gpu_run.cuh),
// planned by plan_fi_prefill (FlashInfer's PrefillPlan: 16-token pages, bf16 kv and output, the H200
// parameters), packaged exactly as the GPU target packages a run and placed in plain buffers and a
// guarded arena; the check on sampled rows (bench_gpu_check.cuh).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bench/bench_gpu_check.cuh"
#include "bench/bench_gpu_run.cuh"
#include "core/backends/flashinfer.hpp"

namespace headroom::bench {

struct prefill_case {
  int64_t batch_size = 0, q_len = 0;
  rank_layer layer{"model.layers.0.self_attn.attn", attn_kind::full, n_heads, n_kv, head_dim, head_dim, 0};
  batch b;
  attention_inputs<bf16> host;  // host copies of the inputs (the reference's)
  fi_prefill_plan plan;
  variant_run run;
  int64_t warps = 0, smem_bytes = 0, blocks_per_sm = 0;  // the attention launch (launch_shape)

  // Causal FLOPs: 4 * Hq * D * sum_i q_i (q_i + 1) / 2. Query i of a request sees i + 1 keys
  // (kv_len = q_len); each (query, key, head) pair costs 2 * D for Q K^T and 2 * D for P V.
  double flops() const {
    return 4.0 * n_heads * head_dim * static_cast<double>(batch_size) * (q_len * (q_len + 1) / 2);
  }
  std::string shape() const { return std::to_string(batch_size) + "x" + std::to_string(q_len); }
  std::string path() const { return plan.split_kv ? "split" : "nosplit"; }
  std::string plan_line() const {
    return "cta_tile_q " + std::to_string(plan.cta_tile_q) + ", " + path() +
           (plan.split_kv ? " (kv chunk " + std::to_string(plan.kv_chunk_size) + ")" : "") + ", work items " +
           std::to_string(plan.new_batch_size) + " written / " + std::to_string(plan.padded_batch_size) +
           " padded, grid " + std::to_string(plan.padded_batch_size) + " x " + std::to_string(n_kv) + ", " +
           std::to_string(warps) + " warps, " + std::to_string(smem_bytes) + " B dynamic shared, " +
           std::to_string(blocks_per_sm) + " blocks per SM";
  }
};

// The flashinfer_options of the benchmark: page 16, bf16 kv and output, H200.
inline flashinfer_options prefill_options() {
  flashinfer_options o;
  o.page_size = page;
  o.kv_dtype_bytes = 2;
  o.o_dtype_bytes = 2;
  o.device = h200_params();
  return o;
}

// The attention launch of the case (the kernel launch_plan picks): its warps and dynamic shared
// memory (the body's block() and shared_bytes()), and the blocks per SM the occupancy API gives.
template <class K>
inline void launch_shape_of(prefill_case& c) {
  const auto& p = std::get<fi_prefill_params<bf16>>(c.run.params);
  const launch_dim b = K::block(p);
  const std::size_t smem = K::shared_bytes(p);
  const auto fn = &gpu::body_kernel<K, gpu::gpu_context>;
  HEADROOM_CUDA_TRY(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(sizeof(typename K::shared_storage))));
  int blocks = 0;
  HEADROOM_CUDA_TRY(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, static_cast<int>(b.count()), smem));
  c.warps = b.count() / 32, c.smem_bytes = static_cast<int64_t>(smem), c.blocks_per_sm = blocks;
}
inline void launch_shape(prefill_case& c) {
  with_prefill_kernel<bf16, head_dim>(std::get<fi_prefill_params<bf16>>(c.run.params),
                                      [&]<class K>() { launch_shape_of<K>(c); });
}

inline std::unique_ptr<prefill_case> make_prefill_case(int64_t batch_size, int64_t q_len, cudaStream_t s) {
  auto c = std::make_unique<prefill_case>();
  c->batch_size = batch_size;
  c->q_len = q_len;
  c->b.seq_lens.assign(static_cast<std::size_t>(batch_size), q_len);
  c->b.query_lens.assign(static_cast<std::size_t>(batch_size), q_len);
  c->plan = plan_fi_prefill(n_heads, n_kv, head_dim, c->b, prefill_options());
  c->host = make_host_inputs(batch_size, q_len, q_len, s);
  package(c->run, c->host, c->plan, c->layer, c->b);
  c->run.place(s);
  launch_shape(*c);
  return c;
}

// Sampled rows: the first, middle and last request; in each the first query, the last of the first
// q tile and the first of the second (a tile holds cta_tile_q / G queries), the middle and the last.
inline std::vector<std::pair<int64_t, int64_t>> sampled_rows(const prefill_case& c) {
  const int64_t t = c.plan.cta_tile_q / (n_heads / n_kv);
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (int64_t r : {int64_t{0}, c.batch_size / 2, c.batch_size - 1}) {
    if (!rows.empty() && rows.back().first == r) continue;
    std::vector<int64_t> qs{0, t - 1, t, c.q_len / 2, c.q_len - 1};
    std::sort(qs.begin(), qs.end());
    qs.erase(std::unique(qs.begin(), qs.end()), qs.end());
    for (int64_t i : qs)
      if (i >= 0 && i < c.q_len) rows.push_back({r, i});
  }
  return rows;
}

// Every output element written (the output and the plan's scratch were poisoned first) and the
// sampled rows within the bf16 tolerance of the fp32 reference. Empty string: correct.
inline std::string check_prefill(prefill_case& c, bool guarded, cudaStream_t s) {
  int64_t unwritten = -1;
  const auto out = download_output(c.run, guarded, s, unwritten);
  if (unwritten >= 0) {
    const int64_t row = unwritten / head_dim;
    return "output element " + std::to_string(unwritten) + " (token " + std::to_string(row / n_heads) +
           ", head " + std::to_string(row % n_heads) + ") not written (NaN poison)";
  }
  return check_sampled_rows(c.host, out, sampled_rows(c));
}

}  // namespace headroom::bench
