// FA3 schedules worked by hand from vllm-project/flash-attention at 617264c (hopper/flash_api.cpp,
// tile_size.h, heuristics.h, flash_prepare_scheduler.cu), shared by the engine target's host test
// (the launch) and its GPU test (what FA3's own kernel writes): two worked in full below, and variants.
//
// decode_case: Llama 3 8B at TP 8 (4 q heads, 1 kv head, D 128), one request decoding over 300 keys,
// max_num_seqs 1 with graphs 1 and 2: the FULL graph's 32 splits. r = round_up(1, 4) = 4; decode at
// D 128 stays causal (head swizzle); dynamic split: 1 + 3 x 4 = 13 entries, the semaphore at 12.
// The no-roundup capacity 4 x 2 + 1 = 9 entries ends before it; the fixed one is 1 + 4 x 4 = 17.
// FA3's kernel writes entry 0 (seqlen_q 1 x group 4: packed, since 32 splits), 4 (tile 64 x 128: 3
// key blocks, ceil(3 x 1.1 x 1 / 132) = 1 block per SM: 3 splits), 8 (max_kvblocks_in_l2 =
// 8 MiB / (128 x 256 x 2 B) = 128 >= 3 x 16: 16, capped at the 1 packed kv head: 1) and 12 (0), and
// none of the padding entries 1-3, 5-7, 9-11.
//
// eager_case: 48 q heads, 8 kv heads, D 128, an eager step of one request, 17 tokens over 2000 keys
// (tests/backends Fa3.ScheduledSplitsPastTheRunsOutAccum): the heuristic's 14 splits, 13 entries in
// a buffer of exactly 13. Entry 0: 17 x 6 = 102; entry 4: 16 key blocks of 128, ceil(16 x 1.1 x 8 /
// 132) = 2 blocks per SM, min(8, 14) = 8 splits; entry 8: 2 blocks a split, max_kvblocks_in_l2 =
// 4 MiB / 64 KiB = 64 >= 2 x 16: 16, capped at 8 kv heads: 8; entry 12: 0.
//
// The same eager step scheduled by vLLM's builder with the model's 48 query heads but run by a
// layer of 64 (`run_heads`): mha_fwd's split heuristic on the layer's packed query (17 x 8 = 136
// rows, 2 m-blocks of 128 over 8 kv heads, 16 key blocks) picks 7 splits, and with 13 entries
// either way CHECK_SHAPE passes. Its out_accum holds 7 splits, but the request was given 8 (entry
// 4), so split 7 writes past it; and the kernel takes the request's m-blocks from entry 0,
// ceil(102 / 128) = 1, so packed rows 128-135 (token 16, every head: row = token x 8 + head in the
// group) are never computed.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/backends/fa3.hpp"
#include "core/backends/plan.hpp"
#include "core/check/executor.hpp"
#include "core/engine/steps.hpp"

namespace headroom {

struct fa3_case {
  rank_layer layer;
  batch b;
  engine_step st;
  any_plan plan;
  int64_t block_size = 16;
  run_request request() const { return {&layer, dtype::bf16, block_size, &plan, &b}; }
};

// Both cases take another head size d (64 or 256: FA3's other built kernels) where a test needs one;
// the hand-worked values above are d 128's.
inline fa3_case fa3_decode_case(bool no_roundup, int64_t d = 128) {
  fa3_case c{{"model.layers.0.self_attn.attn", attn_kind::full, 4, 1, d, d, 0, 0}, {}, {}, {}};
  c.b.query_lens = {1};
  c.b.seq_lens = {300};
  engine_settings s;
  s.max_num_seqs = 1;
  s.capture_sizes = {1, 2};
  c.st = forward_step(s, c.b);
  fa3_mutants m;
  m.no_roundup = no_roundup;
  c.plan = plan_fa3(s, c.st, fa3_group{4, 1, d}, m);
  return c;
}

// Three decoding requests (300, 40 and 17 keys) replay the graph of 4 of decode_case's layer: the
// schedule's fourth row is padding, no token and no key.
inline fa3_case fa3_padded_decode_case() {
  fa3_case c = fa3_decode_case(false);
  c.b.query_lens = {1, 1, 1};
  c.b.seq_lens = {300, 40, 17};
  engine_settings s;
  s.max_num_seqs = 4;
  s.capture_sizes = {1, 2, 4};
  c.st = forward_step(s, c.b);
  c.plan = plan_fa3(s, c.st, fa3_group{4, 1, 128}, {});
  return c;
}

// A sliding layer (window 256) of 1 query and 1 kv head decoding over 260 keys, max_num_seqs 1: a
// model of one window config, which vLLM's builder schedules with that window; the call attends keys
// 4-259 (window_size (255, 0)).
inline fa3_case fa3_window_case() {
  fa3_case c{{"model.layers.0.self_attn.attn", attn_kind::sliding, 1, 1, 128, 128, 256, 0}, {}, {}, {}};
  c.b.query_lens = {1};
  c.b.seq_lens = {260};
  engine_settings s;
  s.max_num_seqs = 1;
  c.st = forward_step(s, c.b);
  c.plan = plan_fa3(s, c.st, fa3_group{1, 1, 128, 16, 256}, {});
  return c;
}

// Laguna XS.2's sliding layer (64 query heads, 8 kv heads, D 128, window 512) in a model of two window
// configs, which vLLM never schedules ahead of time: two requests decoding over 700 and 40 keys
// replay the graph of 2 (max_num_seqs 2), and the call passes the graph's 32 splits and no metadata.
// mha_fwd allocates round_up(2, 4) = 4 entries a vector: prepare, dynamic split (32 > 1), heads in
// L2 (local: head swizzle), then the semaphore: 1 + 3 x 4 = 13 entries, exactly the buffer.
inline fa3_case fa3_in_call_case() {
  fa3_case c{{"model.layers.1.self_attn.attn", attn_kind::sliding, 64, 8, 128, 128, 512, 0}, {}, {}, {}};
  c.b.query_lens = {1, 1};
  c.b.seq_lens = {700, 40};
  engine_settings s;
  s.max_num_seqs = 2;
  s.capture_sizes = {1, 2};
  c.st = forward_step(s, c.b);
  c.plan = plan_fa3_in_call(s, c.st, fa3_group{64, 8, 128, 16, 512});
  return c;
}

inline fa3_case fa3_eager_case(int64_t run_heads = 48, int64_t d = 128) {
  fa3_case c{{"model.layers.0.self_attn.attn", attn_kind::full, run_heads, 8, d, d, 0, 0}, {}, {}, {}};
  c.b.query_lens = {17};
  c.b.seq_lens = {2000};
  engine_settings s;
  s.cg_mode = cudagraph_mode::none;
  c.st = forward_step(s, c.b);
  c.plan = plan_fa3(s, c.st, fa3_group{48, 8, d}, {});
  return c;
}

// An eager step of one full layer (h query heads over hk kv heads, head size d, v dv) on blocks of
// `block` keys, scheduled ahead as vLLM's builder schedules a model of one window config (head size
// v not passed), or prepared in the call (`in_call`: the layer's own geometry, v included).
inline fa3_case fa3_step_case(int64_t h, int64_t hk, int64_t d, int64_t dv, int64_t block,
                              std::vector<int64_t> query_lens, std::vector<int64_t> seq_lens,
                              bool in_call = false) {
  fa3_case c{{"model.layers.0.self_attn.attn", attn_kind::full, h, hk, d, dv, 0, 0}, {}, {}, {}, block};
  c.b.query_lens = std::move(query_lens);
  c.b.seq_lens = std::move(seq_lens);
  engine_settings s;
  s.cg_mode = cudagraph_mode::none;
  c.st = forward_step(s, c.b);
  fa3_group g{h, hk, d, block, 0};
  if (in_call)
    g.head_size_v = dv;
  else
    g.run_head_size_v = dv;
  c.plan = in_call ? plan_fa3_in_call(s, c.st, g) : plan_fa3(s, c.st, g, {});
  return c;
}

// MiMo-V2's full layer at TP 1 (64 query heads over 4 kv heads, head size 192, v 128) on blocks of
// 128, a decode over 522 keys beside a 9-token chunk, scheduled ahead
// (regressions/c3-fa3-head-size-v-out-accum.json). The schedule (v taken as 192): the 96-key tile
// (v > 128), read without TMA (128 % 96 != 0); 6 key blocks of the decode, ceil(9 x 16 / 128) = 2
// m-blocks over 4 kv heads = 8 tiles < 0.8 x 132 SMs; the efficiency 8s / 132 is best at the most
// splits, min(6 n-blocks, 128) = 6, and 8 x 5 = 40 < 0.85 x 48: 6 splits; the decode gets
// min(ceil(6 / ceil(8 x 1.1 x 4 / 132)), 6) = 6. Dynamic split and head swizzle: 1 + 3 x 4 = 13
// entries. The run (v 128): 128-key tiles, 128 % 128 = 0 and 144 packed rows > 128, so TMA; 5 key
// blocks, 8 tiles, 5 splits (8 x 4 = 32 < 0.85 x 40); the same 13 entries, so CHECK_SHAPE passes,
// and out_accum holds 5 splits where the decode was given 6.
inline fa3_case fa3_diffkv_case() { return fa3_step_case(64, 4, 192, 128, 128, {1, 9}, {522, 9}); }

}  // namespace headroom
