// Real inputs for one attention run: random q / K / V values (never zero: magnitudes in [1/16, 1)
// with random signs; element by element from kernels/input_values.hpp, so a device can make the
// same bytes) in the run's dtype, a paged KV cache whose physical blocks are a random
// permutation (block tables shuffled), and the request bookkeeping. Deterministic in the seed.
// Two shapes: compact (made for the batch alone), or the engine's for a dummy run or a draft pass
// (docs/catalogue.md C4, C8): the persistent block table [max_num_seqs][width] (unused entries hold
// the null block 0, never given to a request), seq_lens [max_num_seqs] and query_start
// [max_num_seqs + 1] holding the step's metadata rows, and q with the step's rows.
// Either KV-cache layout (docs/engines.md §10) holds the same K and V values: the packed cache is
// the separate k_cache and v_cache interleaved row by row, so outputs agree across layouts.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backends/batch.hpp"
#include "core/engine/engine.hpp"
#include "core/engine/steps.hpp"
#include "core/model/geometry.hpp"

namespace headroom {

template <class T>
struct attention_inputs {
  int64_t num_heads = 0, num_kv_heads = 0, head_size = 0;
  int64_t block_size = 16, sliding_window = 0, max_blocks_per_seq = 0, max_query_len = 0;
  std::vector<int32_t> seq_lens, query_start, block_table;  // block_table: -1 past a request's blocks
  std::vector<T> q;                                         // [tokens][heads][head_size]
  kv_layout layout = kv_layout::separate;
  std::vector<T> k_cache, v_cache;  // separate: [blocks][block_size][kv_heads][head_size] each
  std::vector<T> kv_cache;          // packed: [blocks][block_size][kv_heads][2 * head_size], K then V
  // The values' source: the streams of stream_key(value_seed, ...); q_count and kv_count are q's and
  // K's (= V's) elements. With input_values::deferred the vectors above stay empty: whoever runs
  // the inputs makes the values (the GPU campaign, on the device).
  uint64_t value_seed = 0;
  int64_t q_count = 0, kv_count = 0;
  bool has_values = true;
  // Elements between consecutive kv-head rows; V's row starts head_size in (packed) or in v_cache.
  int64_t kv_row_stride() const { return layout == kv_layout::packed ? 2 * head_size : head_size; }
  // The engine's shape: the requests the kernels iterate and q's rows (-1: the vectors' own sizes);
  // `consistent`: the metadata stays inside its buffers, so the fp32 reference is defined.
  int64_t metadata_rows = -1, q_rows = -1;
  bool consistent = true;
  int64_t num_seqs() const {
    return metadata_rows >= 0 ? metadata_rows : static_cast<int64_t>(seq_lens.size());
  }
  int64_t num_tokens() const { return q_rows >= 0 ? q_rows : query_start.empty() ? 0 : query_start.back(); }
};

// Where the q / K / V values are made: here (the simulator, the reference), or later by the runner.
enum class input_values { host, deferred };

// Largest KV cache (elements of K) and q the simulator builds for one run (2 x 256 MiB of fp32).
inline constexpr int64_t max_sim_kv_elems = int64_t{1} << 26;
// Largest KV cache (elements of K) and q the engine target's host builds an arena image for. 2^28:
// the smallest power of two holding bench_gpu_decode's KV at TP 1 (64x4096, 128x2048, 256x1024 at
// 8 kv heads of 128: exactly 2^28) and bench_gpu_prefill's q (4x4096 at 64 heads of 128: 2^27).
// Bounded by the frame the worker protocol carries (gpu::max_message_bytes, 8 GiB; static_assert in
// targets/engine/engine_arena.cpp): q, K, V and the output at the cap in fp32 fill 4 GiB, half a
// frame, the rest left for the plan's scratch and the bands. At 2^29 they alone would fill it.
inline constexpr int64_t max_engine_input_elems = int64_t{1} << 28;

// Who builds a run's inputs, and so how many elements one layer's q or KV cache may hold: above
// `max_elems` the inputs are refused with "too large for <builder> (at most 2^k)". A power of two.
struct input_cap {
  int64_t max_elems = max_sim_kv_elems;
  const char* builder = "the simulator";
};
inline constexpr input_cap sim_input_cap{max_sim_kv_elems, "the simulator"};
inline constexpr input_cap engine_input_cap{max_engine_input_elems, "the engine target's arena image"};

enum class target_kind;  // core/check/executor.hpp
// A target's cap: the engine target's for `engine` (only an arena image is built on the host: no
// simulation), the simulator's for the others. The GPU target keeps the simulator's: each of its
// runs also builds the fp32 reference on the host and a device-checked run, neither sized past it.
input_cap input_cap_of(target_kind t);

// Throws input_error when the layer or batch cannot be simulated (heads not divisible, head size
// above max_kernel_head_size), or when a cache or a q holds more than cap.max_elems elements (the
// field "batch", the count and the layer named). Checked 64-bit sizes (overflow_error past them).
template <class T>
attention_inputs<T> make_attention_inputs(const rank_layer& l, const batch& b, int64_t block_size,
                                          uint64_t seed, kv_layout layout = kv_layout::separate,
                                          input_values values = input_values::host,
                                          input_cap cap = sim_input_cap);
// The engine's shape for step `st` (max_num_seqs rows of `width` blocks).
template <class T>
attention_inputs<T> make_step_inputs(const rank_layer& l, const engine_step& st, int64_t max_num_seqs,
                                     int64_t width, int64_t block_size, uint64_t seed,
                                     kv_layout layout = kv_layout::separate,
                                     input_values values = input_values::host, input_cap cap = sim_input_cap);

// splitmix64: the project's small deterministic generator.
struct splitmix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }  // [0, 1)
};

}  // namespace headroom
