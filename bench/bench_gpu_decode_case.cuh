// One decode shape on the device, for bench_gpu_decode.cu: inputs made on the GPU
// (bench_gpu_run.cuh, query length 1), per engine its plan (plan_triton + triton_uses_3d with
// thr = 16, plan_fi_decode with the H200 parameters), packaged exactly as the GPU target packages a
// run and placed in plain buffers and a guarded arena (bench_gpu_run.cuh's variant_run).
#pragma once

#include <memory>
#include <string>

#include "bench/bench_gpu_run.cuh"
#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"

namespace headroom::bench {

enum class variant { triton, fi };

struct decode_case {
  int64_t batch_size = 0, ctx_len = 0;
  rank_layer layer{"model.layers.0.self_attn.attn", attn_kind::full, n_heads, n_kv, head_dim, head_dim, 0};
  batch b;
  attention_inputs<bf16> host;  // host copies of the inputs (the reference's)
  triton_plan tplan;
  fi_decode_plan fplan;
  variant_run runs[2];

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

inline std::unique_ptr<decode_case> make_case(int64_t batch_size, int64_t ctx_len, cudaStream_t s) {
  auto c = std::make_unique<decode_case>();
  c->batch_size = batch_size;
  c->ctx_len = ctx_len;
  c->b = decode_batch(batch_size, ctx_len);
  c->tplan = plan_triton(n_heads, n_kv, head_dim, triton_options{});
  c->fplan = plan_fi_decode(n_heads, n_kv, head_dim, dtype::bf16, c->b, flashinfer_options{});
  c->host = make_host_inputs(batch_size, ctx_len, 1, s);
  package(c->run_of(variant::triton), c->host, c->tplan, c->layer, c->b);
  package(c->run_of(variant::fi), c->host, c->fplan, c->layer, c->b);
  for (auto& r : c->runs) r.place(s);
  return c;
}

}  // namespace headroom::bench
