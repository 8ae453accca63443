// RapidCheck generators of batches (decode, prefill, mixed) whose sequence and query lengths sit
// around the kernels' boundaries: Triton's 16 segments of 16-token tiles (256 tokens), FlashInfer's
// 128-token minimum KV chunk and 16-token pages, the prefill planner's 16/64/128-row tiles.
#pragma once

#include <cstdint>

#include <rapidcheck.h>

#include "core/backends/batch.hpp"

namespace headroom::generators {

struct batch_limits {
  int64_t max_decode_seqs = 16;  // decode requests: up to one past Triton's 3D threshold
  int64_t token_cost = 1;        // cost of one KV token for one query: heads x head size
  int64_t max_work = 1 << 21;    // sum over requests of query_len x seq_len x token_cost
  int64_t max_len = 600;         // longest sequence
};

// Sequence lengths: half the time a boundary (1, 16, 64, 128, 240, 256, 512) plus -2..+2, else
// uniform; clamped to [1, cap].
rc::Gen<int64_t> lengths(int64_t cap);

rc::Gen<batch> decode_batches(const batch_limits& lim);
rc::Gen<batch> prefill_batches(const batch_limits& lim);
rc::Gen<batch> mixed_batches(const batch_limits& lim);
// Decode 6 : prefill 1 : mixed 2.
rc::Gen<batch> batches(const batch_limits& lim);

// query_len x seq_len x token_cost summed over requests (the simulator's work, roughly).
int64_t batch_work(const batch& b, int64_t token_cost);

}  // namespace headroom::generators
