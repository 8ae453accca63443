// One row of the fp32 reference attention (kernels/reference.hpp): token i of request s, query head
// h, over the paged KV cache, in plain loops on raw pointers, so that the host reference and the
// simulated GPU worker's campaign check (tests/gpu/sim_worker.cpp) run the same code; the device's
// check (targets/gpu/worker/batch_verdict.cuh) computes the same definition over chunks of keys,
// merged per row. Two passes over the visible keys (the largest score, then the exponentials with
// the sum and the weighted values); the scores of the first pass are kept in `scores` (one per
// visible key) when given, else computed twice.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/sim/host_device.hpp"
#include "core/util/bisect.hpp"
#include "kernels/numeric.hpp"

namespace headroom {

template <class T>
struct reference_view {
  const T* q = nullptr;  // [tokens][heads][head_size]
  const T* k = nullptr;  // K row r at r * stride, V row r at v + r * stride (either layout)
  const T* v = nullptr;
  const int32_t* block_table = nullptr;  // [requests][width]
  const int32_t* seq_lens = nullptr;
  const int32_t* query_start = nullptr;
  int64_t heads = 0, kv_heads = 0, head_size = 0, block_size = 0, window = 0, width = 0, stride = 0;
};

// The keys a batch's token t sees: its request s (query_start[s] <= t < query_start[s + 1]), its
// position and the first key of its window. keys_in_request knows s; keys_of_token finds it by
// bisection over the `seqs` requests.
struct token_keys {
  int64_t s = 0, pos = 0, first = 0;
};
HEADROOM_HOST_DEVICE inline token_keys keys_in_request(const int32_t* seq_lens, const int32_t* query_start,
                                                       int64_t s, int64_t window, int64_t t) {
  token_keys k;
  k.s = s;
  const int64_t len = seq_lens[s], qn = query_start[s + 1] - query_start[s];
  k.pos = len - qn + (t - query_start[s]);
  k.first = window > 0 && k.pos - window + 1 > 0 ? k.pos - window + 1 : 0;
  return k;
}
HEADROOM_HOST_DEVICE inline token_keys keys_of_token(const int32_t* seq_lens, const int32_t* query_start,
                                                     int64_t seqs, int64_t window, int64_t t) {
  const int64_t s = last_at_or_below(seqs, t, [&](int64_t i) { return query_start[i]; });
  return keys_in_request(seq_lens, query_start, s, window, t);
}

// Element offset in the cache of key `key` of request s, for query head h (its kv head: h over the
// group size): the key's block from the request's block-table row, its slot there, the kv head's row.
template <class T>
HEADROOM_HOST_DEVICE int64_t kv_row_of(const reference_view<T>& r, int64_t s, int64_t key, int64_t h) {
  const int64_t bs = r.block_size, blk = r.block_table[s * r.width + key / bs];
  return ((blk * bs + key % bs) * r.kv_heads + h / (r.heads / r.kv_heads)) * r.stride;
}

// o[0 .. head_size) = the attention output of (request s, its query token i, head h).
template <class T>
HEADROOM_HOST_DEVICE void reference_row(const reference_view<T>& r, int64_t s, int64_t i, int64_t h, float* o,
                                        float* scores = nullptr) {
  const int64_t D = r.head_size, H = r.heads;
  const int64_t q0 = r.query_start[s];
  const token_keys k = keys_in_request(r.seq_lens, r.query_start, s, r.window, q0 + i);
  const int64_t pos = k.pos, first = k.first;
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  const T* qr = r.q + ((q0 + i) * H + h) * D;
  auto score = [&](int64_t key) {
    const T* kr = r.k + kv_row_of(r, s, key, h);
    float dot = 0.0f;
    for (int64_t d = 0; d < D; ++d) dot += to_float(qr[d]) * to_float(kr[d]);
    return dot * scale;
  };
  float mx = -INFINITY;
  for (int64_t j = first; j <= pos; ++j) {
    const float x = score(j);
    if (scores) scores[j - first] = x;
    mx = fmaxf(mx, x);
  }
  for (int64_t d = 0; d < D; ++d) o[d] = 0.0f;
  float sum = 0.0f;
  for (int64_t j = first; j <= pos; ++j) {
    const float p = expf((scores ? scores[j - first] : score(j)) - mx);
    sum += p;
    const T* vr = r.v + kv_row_of(r, s, j, h);
    for (int64_t d = 0; d < D; ++d) o[d] += p * to_float(vr[d]);
  }
  for (int64_t d = 0; d < D; ++d) o[d] /= sum;
}

// An output element against its reference: |out - ref| <= atol + rtol |ref|, and finite.
HEADROOM_HOST_DEVICE inline bool within_tolerance(float out, float ref, double atol, double rtol) {
#if HEADROOM_ON_DEVICE
  const bool finite = isfinite(out);
#else
  const bool finite = std::isfinite(out);
#endif
  return finite && fabs(static_cast<double>(out) - ref) <= atol + rtol * fabs(static_cast<double>(ref));
}

}  // namespace headroom
