// Random run requests for the GPU lane's tests and agreement driver: a layer, a builder head count
// (smaller than the layer's when an overflow is wanted, the bug of docs/engines.md §1), the backend's plan
// (Triton 3D decode or FlashInfer split-KV decode), a decode batch and a dtype, owned together so
// a run_request can point into them. Sizes stay small: a case runs in milliseconds on the sim.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/check/executor.hpp"
#include "core/sim/memory.hpp"
#include "targets/gpu/launch/planted.hpp"
#include "targets/gpu/worker/wire.hpp"
#include "kernels/inputs.hpp"

namespace headroom::gpu_test {

struct owned_case {
  uint64_t index = 0;
  rank_layer layer;
  int64_t builder_heads = 0;
  batch b;
  any_plan plan;
  dtype dt = dtype::bf16;
  int64_t block_size = 16;
  uint64_t seed = 0;
  kv_layout layout = kv_layout::separate;
  bool model_overflow = false;  // the formulas say a plan buffer is too small

  run_request request() const { return {&layer, dt, block_size, &plan, &b, seed, nullptr, 0, 0, layout}; }
  std::string kind;             // the prefill lane's kind ("" in the decode lane)
  const char* backend() const;  // "triton" or "flashinfer"
  std::string describe() const;
};

// Case `index` of the stream `seed`: the same pair always gives the same case. With
// want_overflow the builder is planned with fewer heads than the layer runs with and the batch is
// drawn until the formulas say it overflows (a few tries; the case says what it got).
owned_case random_case(uint64_t seed, uint64_t index, bool want_overflow);

// The prefill lane's case `index` (gpu_prefill_cases.cpp): one of FlashInfer prefill over a
// prefill batch, a mixed step through the Triton-style 2D kernel or through FlashInfer's prefill
// kernel, and tensor-core decode under a CUDA graph (split-KV disabled on half, the pre-fix grid
// of catalogue C10 on half of those). With want_overflow the builder plans fewer heads per kv head
// than the layer has (rows no tile covers, or scratch past its end).
owned_case random_prefill_case(uint64_t seed, uint64_t index, bool want_overflow);

// Plan buffers whose touched extent is past capacity, by the observation (any executor).
std::vector<std::string> overflowing_buffers(const owned_case& c, const observation& o);

// The simulator's output for the case (the same inputs and params the sim executor uses), as float.
std::vector<float> sim_output(const owned_case& c);

// The planted kernel (planted.hpp) as a GPU request and on the simulator: `out` has out_extent
// floats (scratch), `in` has in_extent floats of data; thread i stores out[offset + i] for
// i < n_store and loads in[i] for i < n_load.
struct planted_case {
  int64_t out_extent = 1000, in_extent = 1000;
  int64_t n_store = 1000, n_load = 0, offset = 0;
};
gpu::gpu_request planted_request(const planted_case& p);
sim::sim_log planted_on_sim(const planted_case& p);

}  // namespace headroom::gpu_test
