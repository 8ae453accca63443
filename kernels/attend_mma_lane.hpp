// The registers and loads of the tensor-core pass (attend_mma.hpp): one lane's fragments and
// state, and the K / V row loads of a 16-key step straight from the paged cache (16-byte chunks;
// branch-free when every row is whole and aligned).
#pragma once

#include "kernels/attend_shared.hpp"

namespace headroom {

inline constexpr int mma_keys = 16;  // keys per product (the m of m16n8k16)

// One lane's registers for a pass (about 200 at Dp 128 without launch bounds: the compiler keeps
// them in registers when every index is a compile-time constant).
template <int Dp>
struct mma_lane {
  static constexpr int J = Dp / 32;  // 32-dim blocks
  uint32_t q[J][4];                  // Q[row g][32j + 8q ..] as bf16 / fp16 pairs (B of the scores)
  uint32_t kv[2][J][4];              // K[key base + 8h + g][32j + 8q ..] (A of the scores), then V
                                     // of the same keys and dims, transposed before the values
  int64_t off[2];                    // element offsets of the rows of keys base + g, base + 8 + g
  float s[4];                        // S^T[key g, g + 8][rows 2q, 2q + 1]: c0 c1 = key g
  uint32_t pt[2];                    // P^T of keys 0-7, 8-15 (B of the values) after the transpose
  float o[J][2][4];                  // O^T of (j, pair u): dims d(2u), d(2u + 1) x rows 2q, 2q + 1
  float m[2], l[2];                  // rows 2q, 2q + 1: running maximum, this lane's partial sum
  int64_t vlo[2], vhi[2];            // rows 2q, 2q + 1: visible keys (empty: invalid row)
};

template <class Ctx, int Dp>
struct mma_registers {
  decltype(make_registers<mma_lane<Dp>>(std::declval<Ctx&>())) st;
  decltype(make_registers<fvec<2>>(std::declval<Ctx&>())) red;  // lane_max / lane_sum of two rows
};

template <class T>
HEADROOM_HOST_DEVICE inline uint32_t pack2(T lo, T hi) {
  return static_cast<uint32_t>(lo.bits) | static_cast<uint32_t>(hi.bits) << 16;
}

// 8 elements as 4 registers of pairs, first element in the low half: the same bytes (little-endian
// host and GPU), so a copy, not arithmetic on the loaded values (which would wait for the load).
template <class T>
HEADROOM_HOST_DEVICE inline void pack8(const vec<T, 8>& x, uint32_t (&w)[4]) {
  static_assert(sizeof(x) == sizeof(w), "8 elements of 16 bits");
  __builtin_memcpy(&w, &x, sizeof(w));
}

// Every K / V / q row of the pass can be read as whole, aligned 16-byte chunks: head_size is the
// padded size (no partial chunk) and the caches start 16-byte aligned. Block-uniform.
template <int Dp, class T>
HEADROOM_HOST_DEVICE bool mma_rows_aligned(const paged_attention_inputs<T>& p) {
  const auto a16 = [](const void* x) { return reinterpret_cast<uintptr_t>(x) % 16 == 0; };
  return p.head_size == Dp && a16(p.q.data) && a16(p.k_cache.data) && a16(p.v_cache.data);
}

// The 16-byte chunk of dims 32j + 8q .. of the row at element offset `off` (-1: zeros). Aligned:
// `off` is always a row (the caller clamps) and every chunk is whole: one unconditional load each,
// all issued before any is used.
template <class T, int Dp, bool Aligned, class View>
HEADROOM_HOST_DEVICE void mma_load_row(const View& v, int64_t off, int64_t D, int q, uint32_t (&w)[Dp / 32][4]) {
  HEADROOM_UNROLL
  for (int j = 0; j < Dp / 32; ++j) {
    const int64_t d0 = 32 * j + 8 * q;
    vec<T, 8> x;
    if constexpr (Aligned) {
      x = v.template load_vec_aligned<8>(off + d0);
    } else {
      if (off >= 0 && d0 < D)
        x = load_chunk<8>(v, off + d0, D - d0, D - d0 >= 8);
      else
        for (int e = 0; e < 8; ++e) x[e] = from_float<T>(0.0f);
    }
    pack8(x, w[j]);
  }
}

// Rows and state at the start of a pass; returns the mask of valid rows.
// The first key of warp y's step `step` (a step is one half of a tile: round step / 2, half step % 2).
HEADROOM_HOST_DEVICE inline int64_t mma_step_base(int64_t lo, int64_t W, int64_t y, int64_t step) {
  return lo + ((step / 2) * W + y) * attn_tile + (step % 2) * mma_keys;
}

// Issues the K loads of step `step` (keys at or past hi, and a warp without a tile, read zeros, or
// in the aligned form the last key's row again: its probability is 0); the keys' row offsets stay
// for the V loads, and the score accumulators start at zero. (Issuing the next step's K before
// this step's products, software pipelining, measured slower on the H200: docs/bench.md.)
template <class T, int Dp, bool Aligned, class Ctx, class Regs>
HEADROOM_HOST_DEVICE void mma_fetch_k(Ctx& ctx, const paged_attention_inputs<T>& p, Regs& rg, int64_t seq,
                                      int64_t kvh, int64_t lo, int64_t hi, int64_t step) {
  const auto kc = ctx.global(p.k_cache);
  const auto bt = ctx.global(p.block_table);
  const int64_t D = p.head_size, bs = p.block_size, W = ctx.block_dim().y;
  ctx.threads([&](const thread_idx& t) {
    auto& r = rg.st[t];
    const int g = t.x / 4, q = t.x % 4;
    const int64_t base = mma_step_base(lo, W, t.y, step);
    HEADROOM_UNROLL
    for (int h = 0; h < 2; ++h) {
      int64_t key = base + 8 * h + g;
      r.off[h] = -1;
      if (Aligned && key >= hi) key = hi - 1;
      if (key < hi)
        r.off[h] = ((bt.load(seq * p.max_blocks_per_seq + key / bs) * bs + key % bs) * p.num_kv_heads + kvh) * D;
      mma_load_row<T, Dp, Aligned>(kc, r.off[h], D, q, r.kv[h]);
    }
    HEADROOM_UNROLL
    for (int c = 0; c < 4; ++c) r.s[c] = 0.0f;
  });
}

// V of the same keys, issued after the scores' products (K's registers are free by then).
template <class T, int Dp, bool Aligned, class Ctx, class Regs>
HEADROOM_HOST_DEVICE void mma_load_v(Ctx& ctx, const paged_attention_inputs<T>& p, Regs& rg) {
  const auto vc = ctx.global(p.v_cache);
  ctx.threads([&](const thread_idx& t) {
    auto& r = rg.st[t];
    HEADROOM_UNROLL
    for (int h = 0; h < 2; ++h) mma_load_row<T, Dp, Aligned>(vc, r.off[h], p.head_size, t.x % 4, r.kv[h]);
  });
}

}  // namespace headroom
