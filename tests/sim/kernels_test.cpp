// Every kernel body against the fp32 reference within the dtype tolerance, on random in-bounds
// geometries (GQA groups 1..8, head sizes 64 / 80 / 128 and a few odd ones, sliding windows,
// decode and prefill batches), for bf16, fp16 and fp32; the checked run is also identical, bit for
// bit, to the same bodies run natively, and to the tensor-core pass at other pipeline depths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <variant>

#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"
#include "kernels/reference.hpp"
#include "targets/sim/sim_executor.hpp"
#include "targets/sim/sim_launch.hpp"
#include "kernels/tolerance.hpp"

namespace headroom {
namespace {

struct geometry_case {
  rank_layer layer;
  batch b;
  int64_t block_size = 16;
};

// A valid random case: kv 1..4, group 1..8, head size mostly 64/80/128, windows on a third.
geometry_case random_case(splitmix64& rng, bool decode, int64_t max_len) {
  static constexpr int64_t head_sizes[] = {64, 80, 128, 64, 80, 128, 32, 100, 256};
  geometry_case c;
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng.next() % static_cast<uint64_t>(n)); };
  c.layer.name = "model.layers.0.self_attn.attn";
  c.layer.num_kv_heads = 1 + pick(3);
  c.layer.num_heads = c.layer.num_kv_heads * (1 + pick(8));
  c.layer.head_size = c.layer.head_size_v = head_sizes[pick(9)];
  c.layer.sliding_window = pick(3) == 0 ? 1 + pick(48) : 0;
  c.block_size = pick(2) ? 16 : 1 + pick(32);
  const int64_t seqs = 1 + pick(4);
  for (int64_t i = 0; i < seqs; ++i) {
    const int64_t len = 1 + pick(max_len);
    c.b.seq_lens.push_back(len);
    c.b.query_lens.push_back(decode ? 1 : 1 + pick(std::min<int64_t>(len, 24)));
  }
  return c;
}

struct worst {
  double err[3] = {0, 0, 0};
  ~worst() { std::printf("largest |out - ref|: bf16 %.3g, fp16 %.3g, fp32 %.3g\n", err[0], err[1], err[2]); }
};
worst worst_seen;

observation run_case(const geometry_case& c, const any_plan& plan, dtype d, uint64_t seed, sim_executor& ex) {
  run_request r;
  r.layer = &c.layer;
  r.kv_dtype = d;
  r.block_size = c.block_size;
  r.plan = &plan;
  r.b = &c.b;
  r.seed = seed;
  observation o = ex.run(r);
  double& w = worst_seen.err[static_cast<int>(d)];
  w = std::max(w, ex.last().max_abs_err);
  return o;
}

void expect_clean(const observation& o, const sim_executor& ex, const std::string& what) {
  EXPECT_TRUE(o.output_checked) << what;
  EXPECT_FALSE(o.output_mismatch) << what << ": " << o.mismatch_detail;
  EXPECT_EQ(o.oob_count, 0) << what << "\n" << ex.last().log.describe();
  EXPECT_EQ(o.uninitialized_reads + o.races, 0) << what << "\n" << ex.last().log.describe();
}

std::string describe(const geometry_case& c, dtype d) {
  std::string s = std::string(to_string(d)) + " H=" + std::to_string(c.layer.num_heads) +
                  " KV=" + std::to_string(c.layer.num_kv_heads) + " D=" + std::to_string(c.layer.head_size) +
                  " W=" + std::to_string(c.layer.sliding_window) + " bs=" + std::to_string(c.block_size) +
                  " seqs";
  for (std::size_t i = 0; i < c.b.seq_lens.size(); ++i)
    s += " " + std::to_string(c.b.seq_lens[i]) + "/" + std::to_string(c.b.query_lens[i]);
  return s;
}

class KernelsVsReference : public ::testing::TestWithParam<dtype> {};

TEST_P(KernelsVsReference, TritonSegmentedDecode) {
  splitmix64 rng{11 + static_cast<uint64_t>(GetParam())};
  sim_executor ex;
  for (int i = 0; i < 14; ++i) {
    const auto c = random_case(rng, true, 300);
    triton_options o;
    o.snap_to_capture = false;
    const any_plan plan = plan_triton(c.layer.num_heads, c.layer.num_kv_heads, c.layer.head_size, o);
    ASSERT_TRUE(triton_uses_3d(std::get<triton_plan>(plan), c.b));
    expect_clean(run_case(c, plan, GetParam(), i, ex), ex, describe(c, GetParam()));
  }
}

TEST_P(KernelsVsReference, Triton2dPrefillAndMixed) {
  splitmix64 rng{23 + static_cast<uint64_t>(GetParam())};
  sim_executor ex;
  for (int i = 0; i < 10; ++i) {
    const auto c = random_case(rng, false, 120);
    const any_plan plan = plan_triton(c.layer.num_heads, c.layer.num_kv_heads, c.layer.head_size, {});
    expect_clean(run_case(c, plan, GetParam(), i, ex), ex, describe(c, GetParam()));
  }
}

TEST_P(KernelsVsReference, FlashInferSplitKvDecode) {
  splitmix64 rng{37 + static_cast<uint64_t>(GetParam())};
  sim_executor ex;
  int splits = 0, multi_chunk = 0;
  for (int i = 0; i < 14; ++i) {
    auto c = random_case(rng, true, 420);
    flashinfer_options o;
    o.page_size = c.block_size;
    o.cuda_graph = i % 3 == 0;
    const any_plan plan =
        plan_fi_decode(c.layer.num_heads, c.layer.num_kv_heads, c.layer.head_size, GetParam(), c.b, o);
    const auto& fp = std::get<fi_decode_plan>(plan);
    splits += fp.split;
    multi_chunk += fp.num_work > c.b.num_seqs();
    expect_clean(run_case(c, plan, GetParam(), i, ex), ex, describe(c, GetParam()));
  }
  EXPECT_GE(splits, 4);
  EXPECT_GE(multi_chunk, 2);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, KernelsVsReference, ::testing::Values(dtype::bf16, dtype::fp16, dtype::fp32),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// Shapes the random mix rarely reaches: groups above 16 (BLOCK_M = next_pow2(G), several row
// passes), head size 512 (16 elements a lane), tiny and unaligned head sizes, one-token pages.
TEST(Kernels, UnusualShapes) {
  struct shape {
    int64_t heads, kv, head_size, window, block_size;
    batch b;
  };
  const std::vector<shape> shapes = {
      {24, 1, 128, 0, 16, decode_batch(3, 90)}, {64, 1, 64, 0, 16, decode_batch(2, 300)},
      {2, 1, 512, 0, 16, decode_batch(2, 70)},  {4, 2, 4, 0, 1, decode_batch(3, 40)},
      {6, 2, 100, 5, 7, decode_batch(4, 150)},  {32, 2, 72, 33, 16, batch{{200, 9}, {40, 9}}},
  };
  sim_executor ex;
  for (const auto& sh : shapes) {
    geometry_case c;
    c.layer = {"l",          sh.window ? attn_kind::sliding : attn_kind::full,
               sh.heads,     sh.kv,
               sh.head_size, sh.head_size,
               sh.window};
    c.b = sh.b;
    c.block_size = sh.block_size;
    const any_plan tp = plan_triton(sh.heads, sh.kv, sh.head_size, {});
    expect_clean(run_case(c, tp, dtype::fp32, 1, ex), ex, "triton " + describe(c, dtype::fp32));
    if (!c.b.is_decode()) continue;
    flashinfer_options o;
    o.page_size = sh.block_size;
    o.cuda_graph = true;
    const any_plan fp = plan_fi_decode(sh.heads, sh.kv, sh.head_size, dtype::fp16, c.b, o);
    expect_clean(run_case(c, fp, dtype::fp16, 2, ex), ex, "flashinfer " + describe(c, dtype::fp16));
  }
}

// Each body, checked and native, writes the same bits.
TEST(Kernels, CheckedRunEqualsNativeRun) {
  splitmix64 rng{5};
  for (int i = 0; i < 4; ++i) {
    const auto c = random_case(rng, true, 200);
    const auto host = make_attention_inputs<bf16>(c.layer, c.b, c.block_size, i);
    const triton_plan tp = plan_triton(c.layer.num_heads, c.layer.num_kv_heads, c.layer.head_size, {});
    flashinfer_options fo;
    fo.page_size = c.block_size;
    const fi_decode_plan fp =
        plan_fi_decode(c.layer.num_heads, c.layer.num_kv_heads, c.layer.head_size, dtype::bf16, c.b, fo);
    std::vector<uint16_t> outs[4];
    for (int k = 0; k < 4; ++k) {
      sim::memory m;
      const auto in = upload_inputs(m, host);
      const sim_mode mode = k % 2 ? sim_mode::native : sim_mode::checked;
      if (k < 2)
        run_family<bf16>(m, mode, make_triton_params(m, in, tp, c.layer, c.b, true));
      else
        run_family<bf16>(m, mode, make_fi_decode_params(m, in, fp));
      for (const bf16 x : m.download(in.output, mode == sim_mode::checked)) outs[k].push_back(x.bits);
    }
    EXPECT_EQ(outs[0], outs[1]) << describe(c, dtype::bf16);
    EXPECT_EQ(outs[2], outs[3]) << describe(c, dtype::bf16);
  }
}

// The tensor-core pass's pipeline depth (Stages) changes when K and V arrive, never what is computed:
// 1 to 4 stages write the same bits, each run checked with nothing recorded (a read of a slot
// before its copy landed would be an uninitialized read).
template <int Dp, int S>
std::vector<uint16_t> staged_output(const geometry_case& c, uint64_t seed, bool fi) {
  sim::memory m;
  const auto in = upload_inputs(m, make_attention_inputs<bf16>(c.layer, c.b, c.block_size, seed));
  if (fi) {
    flashinfer_options fo;
    fo.page_size = c.block_size;
    const auto p = make_fi_decode_params(
        m, in,
        plan_fi_decode(c.layer.num_heads, c.layer.num_kv_heads, c.layer.head_size, dtype::bf16, c.b, fo));
    sim::launch(m, fi_batch_decode<bf16, Dp, S>{}, p);
    if (p.split) sim::launch(m, fi_merge_states<bf16, Dp>{}, p);
  } else {
    const triton_plan tp = plan_triton(c.layer.num_heads, c.layer.num_kv_heads, c.layer.head_size, {});
    sim::launch(m, triton_attention<bf16, Dp, false, S>{},
                make_triton_params(m, in, tp, c.layer, c.b, false));
  }
  EXPECT_EQ(m.log.oob_count + m.log.uninitialized_reads + m.log.races + m.log.misuse_count, 0)
      << (fi ? "flashinfer " : "triton ") << S << " stages " << describe(c, dtype::bf16);
  std::vector<uint16_t> bits;
  for (const bf16 x : m.download(in.output, true)) bits.push_back(x.bits);
  return bits;
}

// One stage runs K and V as separate copy groups (attend_mma.hpp), more stages one group per step:
// the same arithmetic, so the same bits.
template <int Dp>
void expect_same_at_every_depth(const geometry_case& c, uint64_t seed) {
  for (const bool fi : {false, true}) {
    const auto one = staged_output<Dp, 1>(c, seed, fi);
    EXPECT_EQ(one, (staged_output<Dp, 2>(c, seed, fi))) << describe(c, dtype::bf16);
    EXPECT_EQ(one, (staged_output<Dp, 3>(c, seed, fi))) << describe(c, dtype::bf16);
    EXPECT_EQ(one, (staged_output<Dp, 4>(c, seed, fi)))
        << describe(c, dtype::bf16);  // > a short warp's steps
  }
}

TEST(Kernels, PipelineDepthDoesNotChangeTheResult) {
  splitmix64 rng{11};
  int tried = 0;
  for (int i = 0; tried < 6 && i < 100; ++i) {
    const auto c = random_case(rng, true, 300);
    const int64_t dp = layout_dp(c.layer.head_size);
    if (dp == 64)
      expect_same_at_every_depth<64>(c, static_cast<uint64_t>(i));
    else if (dp == 128)
      expect_same_at_every_depth<128>(c, static_cast<uint64_t>(i));
    else
      continue;
    ++tried;
  }
  EXPECT_EQ(tried, 6);
}

// Bytes from the start of `base` to `p` (where a shared-memory view of a launch ends).
std::size_t offset_in(const void* base, const void* p) {
  return static_cast<std::size_t>(static_cast<const char*>(p) - static_cast<const char*>(base));
}

// A launch of w warps allocates attn_shared_bytes(w) (targets/gpu/launch/launch.cuh): every element of
// the w-warp views (stage, accumulators over it, (m, l)) lies inside, and blocks of 4 warps fit
// four to an H200 SM (227 KiB of shared memory, 1 KiB reserved per block), the point of sizing it.
template <class T, int Dp, int S>
void expect_views_inside_allocation() {
  using Sh = attn_shared_mma<T, Dp, S>;
  static Sh s;
  const auto end_of = [&](const void* p) { return offset_in(&s, p); };
  for (int w = 1; w <= Sh::W; ++w) {
    const std::size_t bytes = attn_shared_bytes<T, Dp, S>(w);
    EXPECT_LE(end_of(&s.stage[0] + w * Sh::warp_stage), bytes) << "Dp " << Dp << " S " << S << " warps " << w;
    EXPECT_LE(end_of(&s.o[0] + w * attn_rows * Dp), bytes) << "Dp " << Dp << " S " << S << " warps " << w;
    EXPECT_LE(end_of(&s.ml[0] + w * attn_rows * 2), bytes) << "Dp " << Dp << " S " << S << " warps " << w;
    if (w > 1) {
      EXPECT_LT((attn_shared_bytes<T, Dp, S>(w - 1)), bytes);
    }
  }
  EXPECT_EQ((attn_shared_bytes<T, Dp, S>(Sh::W)), sizeof(Sh));
}

TEST(Kernels, SharedMemoryOfALaunchCoversItsWarps) {
  expect_views_inside_allocation<bf16, 64, 1>();
  expect_views_inside_allocation<bf16, 128, 1>();
  expect_views_inside_allocation<fp16, 128, 2>();
  expect_views_inside_allocation<bf16, 256, 1>();
  EXPECT_LE(4 * ((attn_shared_bytes<bf16, 128, 1>(4)) + 1024), std::size_t{228} * 1024);
  EXPECT_EQ((attn_shared_bytes<float, 128, 1>(4)),
            sizeof(attn_shared_simt<128>));  // CUDA-core pass: all of it
}

// The merge's groups: one per work item a request can have (FlashInfer's 256-key chunks of a
// 32768-key request: 128, capped), and the launch's shared memory covers its groups' views.
template <int Dp>
void expect_merge_groups() {
  using M = fi_merge_states<bf16, Dp>;
  fi_decode_params<bf16> p;
  p.in.block_size = 16;
  p.split = true;
  const auto groups = [&](int64_t max_blocks, int64_t chunk, int64_t seqs, int64_t work) {
    p.in.max_blocks_per_seq = max_blocks, p.chunk_tokens = chunk, p.in.num_seqs = seqs, p.num_work = work;
    return M::block(p).y;
  };
  EXPECT_EQ(groups(2048, 256, 1, 128), M::max_groups);  // 1x32768: 128 items, capped
  EXPECT_EQ(groups(256, 512, 16, 128), 8);              // 16x4096: 8 items each
  EXPECT_EQ(groups(2048, 256, 4, 7), 4);                // 4 requests, 7 items: at most 4 in one
  EXPECT_EQ(groups(256, 4096, 1, 1), 1);
  p.split = false;
  EXPECT_EQ(groups(2048, 256, 1, 1), 1);
  static typename M::shared_storage s;
  const auto end_of = [&](const void* a) { return offset_in(&s, a); };
  p.split = true;
  for (int64_t work = 1; work <= 64; ++work) {
    groups(2048, 256, 1, work);
    const int64_t G = M::block(p).y;
    EXPECT_EQ(G, std::min<int64_t>(work, M::max_groups));
    EXPECT_LE(end_of(&s.acc[0] + G * Dp), M::shared_bytes(p)) << "Dp " << Dp << " groups " << G;
    EXPECT_LE(end_of(&s.ms[0] + M::max_groups * 2), M::shared_bytes(p));
    EXPECT_LE(M::block(p).count(), 1024);
  }
}

TEST(Kernels, MergeGroupsCoverARequestsWorkItems) {
  expect_merge_groups<64>();
  expect_merge_groups<128>();
  expect_merge_groups<256>();
  expect_merge_groups<512>();
}

// The tensor-core decode path through the executor: FlashInfer's prefill plan of two one-row
// requests runs the prefill body and matches the reference, reading only written work entries.
TEST(Kernels, TensorCoreDecodePlanIsSimulated) {
  geometry_case c;
  c.layer = {"l", attn_kind::full, 8, 2, 64, 64, 0};
  c.b = decode_batch(2, 40);
  const any_plan plan = plan_fi_prefill(8, 2, 64, c.b, {});
  sim_executor ex;
  const observation o = run_case(c, plan, dtype::bf16, 0, ex);
  EXPECT_TRUE(ex.last().simulated);
  EXPECT_TRUE(o.output_checked);
  EXPECT_FALSE(o.output_mismatch) << o.mismatch_detail;
  EXPECT_EQ(o.uninitialized_reads, 0);
  EXPECT_EQ(o.rows_never_computed, 0);
}

// C10 on the simulator: the pre-fix CUDA-graph grid with split-KV disabled launches 2 * 132 / 2 =
// 132 blocks per kv head over 2 written entries and no mask; each of the 130 padded blocks of each
// of the 2 kv heads reads request_indices, qo_tile_indices and kv_tile_indices once (block-uniform
// code): 3 * 130 * 2 = 780 reads of never-written entries, the count the formulas give too.
TEST(Kernels, GraphGridPastWrittenEntriesIsObserved) {
  geometry_case c;
  c.layer = {"l", attn_kind::full, 8, 2, 64, 64, 0};
  c.b = decode_batch(2, 40);
  flashinfer_options o;
  o.cuda_graph = o.disable_split_kv = true;
  o.exact_no_split_graph_grid = false;
  const any_plan plan = plan_fi_prefill(8, 2, 64, c.b, o);
  sim_executor ex;
  const observation s = run_case(c, plan, dtype::bf16, 0, ex);
  EXPECT_EQ(s.worklist_uninitialized_reads, 780);
  EXPECT_EQ(model_observation(plan, c.layer, c.b, dtype::bf16).worklist_uninitialized_reads, 780);
  o.exact_no_split_graph_grid = true;  // the fix: one block per written entry
  o.uniform_q_len = 1;
  EXPECT_EQ(run_case(c, plan_fi_prefill(8, 2, 64, c.b, o), dtype::bf16, 0, ex).worklist_uninitialized_reads,
            0);
}

TEST(Kernels, Bf16AndFp16ConversionsRoundToNearestEven) {
  EXPECT_EQ(from_float<bf16>(1.0f).bits, 0x3F80);
  EXPECT_EQ(from_float<bf16>(bits_float(0x3F808000u)).bits, 0x3F80);  // tie to even
  EXPECT_EQ(from_float<bf16>(bits_float(0x3F818000u)).bits, 0x3F82);
  EXPECT_EQ(from_float<fp16>(1.0f).bits, 0x3C00);
  EXPECT_EQ(from_float<fp16>(65504.0f).bits, 0x7BFF);
  EXPECT_EQ(from_float<fp16>(65520.0f).bits, 0x7C00);
  EXPECT_EQ(from_float<fp16>(5.9604644775390625e-08f).bits, 0x0001);   // smallest subnormal
  EXPECT_EQ(from_float<fp16>(2.98023223876953125e-08f).bits, 0x0000);  // tie to even: 0
  for (uint32_t h = 0; h < 0x7C00; ++h)                                // every finite fp16 round-trips
    ASSERT_EQ(from_float<fp16>(to_float(fp16{static_cast<uint16_t>(h)})).bits, h);
}

}  // namespace
}  // namespace headroom
