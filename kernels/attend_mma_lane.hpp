// The registers and loads of the tensor-core pass (attend_mma.hpp): one lane's fragments and
// state, and the K / V row loads of a 16-key step straight from the paged cache (16-byte chunks)
// into the lane's own slots of the shared-memory stage: asynchronous copies when every row is whole
// and aligned, plain loads and stores otherwise. The lane reads its chunks back one 32-dim block
// at a time, just before the products that use them.
#pragma once

#include "kernels/attend_shared.hpp"

namespace headroom {

inline constexpr int mma_keys = 16;  // keys per product (the m of m16n8k16)

// One lane's registers for a pass (the compiler keeps them in registers when every index is a
// compile-time constant).
template <int Dp>
struct mma_lane {
  static constexpr int J = Dp / 32;  // 32-dim blocks
  uint32_t q[J][4];                  // Q[row g][32j + 8q ..] as bf16 / fp16 pairs (B of the scores)
  uint32_t kv[2][4];                 // K[key base + 8h + g][32j + 8q ..] of the current j (A of the
                                     // scores), then V of the same keys and dims, transposed
  int64_t off[2];                    // rows of keys base + g, base + 8 + g of the next step to issue
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

// The two elements of a packed pair (pack2's inverse).
template <class T>
HEADROOM_HOST_DEVICE inline vec<T, 2> unpack2(uint32_t x) {
  vec<T, 2> v;
  v[0].bits = static_cast<uint16_t>(x & 0xFFFFu);
  v[1].bits = static_cast<uint16_t>(x >> 16);
  return v;
}

// Two floats rounded to nearest even as T, packed (lo in the low half): one cvt.rn.{bf16,f16}x2 on a
// GPU, the same bits as from_float for every finite value (NaN payloads may differ).
template <class T>
HEADROOM_HOST_DEVICE inline uint32_t pack2_rn(float lo, float hi) {
#if HEADROOM_ON_DEVICE
  uint32_t r;
  if constexpr (std::is_same_v<T, bf16>)
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
#else
  return pack2(from_float<T>(lo), from_float<T>(hi));
#endif
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

// A 16-byte chunk of zeros.
template <class T>
HEADROOM_HOST_DEVICE vec<T, attn_chunk> zero_chunk() {
  vec<T, attn_chunk> x;
  for (int e = 0; e < attn_chunk; ++e) x[e] = from_float<T>(0.0f);
  return x;
}

// The 16-byte chunk of dims d0 .. of the row at element offset `off`, zeros past D or for off -1.
template <class T, class View>
HEADROOM_HOST_DEVICE vec<T, attn_chunk> mma_chunk_or_zeros(const View& v, int64_t off, int64_t d0,
                                                           int64_t D) {
  if (off >= 0 && d0 < D) return load_chunk<attn_chunk>(v, off + d0, D - d0, D - d0 >= attn_chunk);
  return zero_chunk<T>();
}

// The pass's q row at `off` (-1: zeros) as the B fragments of the scores: dims 32j + 8q ...
template <class T, int Dp, class View>
HEADROOM_HOST_DEVICE void mma_load_q(const View& v, int64_t off, int64_t D, int q,
                                     uint32_t (&w)[Dp / 32][4]) {
  HEADROOM_UNROLL
  for (int j = 0; j < Dp / 32; ++j) pack8(mma_chunk_or_zeros<T>(v, off, 32 * j + 8 * q, D), w[j]);
}

// The first key of warp y's step `step` (a step is one half of a tile: round step / 2, half step % 2).
HEADROOM_HOST_DEVICE inline int64_t mma_step_base(int64_t lo, int64_t W, int64_t y, int64_t step) {
  return lo + ((step / 2) * W + y) * attn_tile + (step % 2) * mma_keys;
}

// The element offset in attn_shared_mma::stage of lane t.x's chunk (K or V, row h, 32-dim block j)
// of warp t.y's step `step`: slots [warp][step % S][K|V][h][j][lane], 16 bytes per lane, so a
// warp's reads of one (K|V, h, j) are 512 consecutive bytes.
template <int Dp, int S>
HEADROOM_HOST_DEVICE inline int64_t mma_chunk_at(const thread_idx& t, int64_t step, int kv, int h, int j) {
  const int64_t slot = static_cast<int64_t>(t.y) * S + step % S;
  return (((slot * 2 + kv) * 2 + h) * (Dp / 32) + j) * 32 * attn_chunk +
         static_cast<int64_t>(t.x) * attn_chunk;
}

// One 16-byte chunk of a K or V row (element offset `off`, -1: zeros) into the stage at `at`.
template <class T, bool Aligned, class Ctx, class SV, class GV>
HEADROOM_HOST_DEVICE void mma_stage_chunk(Ctx& ctx, const SV& st, int64_t at, const GV& src, int64_t off,
                                          int64_t d0, int64_t D) {
  if constexpr (Aligned)
    ctx.template copy_async<attn_chunk>(st, at, src, off + d0);
  else
    st.template store_vec<attn_chunk>(at, mma_chunk_or_zeros<T>(src, off, d0, D));
}

// The element offsets of step `step`'s two K / V rows of the lane into r.off, from the block
// table (keys at or past hi, and a warp without a tile: -1, zeros; in the aligned form the last
// key's row again, whose probability is 0). Read one issue ahead of use, so the table's latency
// is not on the step's path.
template <class T, bool Aligned, class Ctx, class Regs>
HEADROOM_HOST_DEVICE void mma_rows(Ctx& ctx, const paged_attention_inputs<T>& p, Regs& rg, int64_t seq,
                                   int64_t kvh, int64_t lo, int64_t hi, int64_t step) {
  const auto bt = ctx.global(p.block_table);
  const int64_t W = ctx.block_dim().y;
  ctx.threads([&](const thread_idx& t) {
    const int64_t base = mma_step_base(lo, W, t.y, step);
    HEADROOM_UNROLL
    for (int h = 0; h < 2; ++h) {
      int64_t key = base + 8 * h + t.x / 4, off = -1;
      if (Aligned && key >= hi) key = hi - 1;
      if (key < hi) off = kv_key_row(p, bt, seq, key, kvh);
      rg.st[t].off[h] = off;
    }
  });
}

// Issues step `step`'s K and / or V chunks (rows r.off, from mma_rows) into its slot: Which 0 K
// only, 1 V only, 2 both.
template <class T, int Dp, int S, bool Aligned, int Which = 2, class Ctx, class SV, class Regs>
HEADROOM_HOST_DEVICE void mma_issue(Ctx& ctx, const paged_attention_inputs<T>& p, const SV& st, Regs& rg,
                                    int64_t step) {
  const auto kc = ctx.global(p.k_cache);
  const auto vc = ctx.global(p.v_cache);
  const int64_t D = p.head_size;
  ctx.threads([&](const thread_idx& t) {
    const int q = t.x % 4;
    HEADROOM_UNROLL
    for (int h = 0; h < 2; ++h) {
      const int64_t off = rg.st[t].off[h];
      HEADROOM_UNROLL
      for (int j = 0; j < Dp / 32; ++j) {
        const int64_t d0 = 32 * j + 8 * q;
        if constexpr (Which != 1)
          mma_stage_chunk<T, Aligned>(ctx, st, mma_chunk_at<Dp, S>(t, step, 0, h, j), kc, off, d0, D);
        if constexpr (Which != 0)
          mma_stage_chunk<T, Aligned>(ctx, st, mma_chunk_at<Dp, S>(t, step, 1, h, j), vc, off, d0, D);
      }
    }
  });
}

// The lane's K (kv 0) or V (kv 1) chunks of block j of step `step`, from the stage into r.kv.
template <int Dp, int S, class Ctx, class SV, class Regs>
HEADROOM_HOST_DEVICE void mma_read(Ctx& ctx, const SV& st, Regs& rg, int64_t step, int kv, int j) {
  ctx.threads([&](const thread_idx& t) {
    auto& r = rg.st[t];
    HEADROOM_UNROLL
    for (int h = 0; h < 2; ++h)
      pack8(st.template load_vec_aligned<attn_chunk>(mma_chunk_at<Dp, S>(t, step, kv, h, j)), r.kv[h]);
  });
}

}  // namespace headroom
