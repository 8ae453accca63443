// How the device's output check (batch_verdict.cuh) cuts its work: the visible keys of every
// (token, head) row are cut into chunks of at most `chunk_keys` keys, one warp each; a second kernel
// merges a row's partial softmax sums. A row of 30,000 keys then costs one chunk's latency, not
// the whole row's. Plain C++: the worker plans on the host, and tests check the plan without a device.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/reference_row.hpp"

namespace headroom::gpu {

inline constexpr int64_t verdict_chunk_keys = 256;  // the shortest chunk

// Keys [lo, hi] of chunk c of the n of a row whose visible keys are [first, pos] (empty when lo > hi).
struct key_range {
  int64_t lo = 0, hi = -1;
};
HEADROOM_HOST_DEVICE inline key_range chunk_range(int64_t first, int64_t pos, int64_t c, int64_t n,
                                                  int64_t chunk) {
  const int64_t lo = first + c * chunk;
  return {lo, c == n - 1 || lo + chunk - 1 > pos ? pos : lo + chunk - 1};
}

// The work items of one case: token t's rows own items [at[t], at[t + 1]), `heads` x n_t of them,
// head h's n_t chunks from at[t] + h n_t. n_t = ceil(visible keys / chunk_keys), at least 1 (an
// empty row is one item with no key: NaN, a mismatch). Without the host's copy of seq_lens and
// query_start (nullptr), or past max_items, every row is one item. heads >= 1. The device takes its keys from
// its own copy: a chunk past the row's end is empty and the last chunk runs to the row's end, so
// every key is summed once whatever the two copies say.
inline std::vector<int64_t> verdict_items(const int32_t* seq_lens, const int32_t* query_start, int64_t seqs,
                                          int64_t tokens, int64_t heads, int64_t window,
                                          int64_t chunk_keys = verdict_chunk_keys,
                                          int64_t max_items = int64_t{1} << 26) {
  std::vector<int64_t> at(static_cast<std::size_t>(tokens + 1), 0);
  const bool known = seq_lens && query_start && seqs > 0 && chunk_keys > 0;
  for (int64_t t = 0; t < tokens; ++t) {
    int64_t n = 1;
    if (known) {
      const token_keys k = keys_of_token(seq_lens, query_start, seqs, window, t);
      const int64_t visible = k.pos - k.first + 1;
      n = visible > chunk_keys ? (visible + chunk_keys - 1) / chunk_keys : 1;
    }
    const int64_t before = at[static_cast<std::size_t>(t)];
    if (known && (n > max_items / heads || before > max_items - heads * n))
      return verdict_items(nullptr, nullptr, seqs, tokens, heads, window, chunk_keys, max_items);
    at[static_cast<std::size_t>(t + 1)] = before + heads * n;
  }
  return at;
}

// A case's chunk length and items: chunks of verdict_chunk_keys keys, 4 times longer while the
// partial sums (head_size + 2 floats per item) would pass the larger of 64 MiB and 4 times what one
// item per row needs: a long prefill keeps its memory bounded, a decode step gets short chunks.
struct verdict_split {
  int64_t chunk = verdict_chunk_keys;
  std::vector<int64_t> items;
};
inline verdict_split split_verdict(const int32_t* seq_lens, const int32_t* query_start, int64_t seqs,
                                   int64_t tokens, int64_t heads, int64_t head_size, int64_t window) {
  const int64_t budget = std::max<int64_t>((int64_t{16} << 20) / (head_size + 2), 4 * tokens * heads);
  verdict_split v;
  for (;;) {
    v.items = verdict_items(seq_lens, query_start, seqs, tokens, heads, window, v.chunk);
    if (v.items.back() <= budget || v.chunk > (int64_t{1} << 32)) return v;
    v.chunk *= 4;
  }
}

}  // namespace headroom::gpu
