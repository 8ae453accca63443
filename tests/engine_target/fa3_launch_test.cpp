// FA3 on the engine target, host side (label cpu, no GPU, no FA3 build): the launch of two
// schedules worked by hand (fa3_case.hpp): the call vLLM's builder makes, the layout the plan
// expects, every pointer at its buffer's payload; the layer's attention call beside it (its
// tensors at mha_fwd's sizes, out_accum for the layer's own split count) and the calls it is not
// made for; SGLang's schedules stay on the simulator; a request without its schedule call is
// refused; and the executor's routing with a stand-in in the FA3 driver's place.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "targets/engine/engine_arena.hpp"
#include "targets/engine/engine_run.hpp"
#include "targets/engine/fa3_attention_inputs.hpp"
#include "targets/engine/fa3_launch.hpp"
#include "targets/engine/engine_executor.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "tests/engine_target/fa3_case.hpp"
#include "tests/engine_target/standin.hpp"

namespace headroom {
namespace {

int64_t fa3_slot(const gpu::gpu_request& rq, const engine::engine_arena& a, const std::string& name) {
  for (std::size_t i = 0; i < rq.buffers.size(); ++i)
    if (rq.buffers[i].name == name) return a.slots[i].start;
  ADD_FAILURE() << "no buffer " << name;
  return -1;
}

gpu::gpu_request fa3_request(const fa3_case& c) {
  gpu::gpu_request rq = make_gpu_request(c.request(), nullptr);
  rq.engine = engine::fa3_engine_args(std::get<fa3_plan>(c.plan));
  return rq;
}

TEST(fa3_launch, graph_decode_by_hand) {
  const fa3_case c = fa3_decode_case(true);
  const gpu::gpu_request rq = fa3_request(c);
  const auto a = engine::make_engine_arena(rq);
  EXPECT_STREQ(engine::engine_of(rq), engine::fa3_engine);
  const auto j = engine::fa3_scheduler_launch(rq, a);
  EXPECT_EQ(j.at("kernel"), "fa3_prepare_scheduler");
  EXPECT_EQ(j.at("batch_size"), 1);
  EXPECT_EQ(j.at("num_heads"), 4);
  EXPECT_EQ(j.at("num_heads_k"), 1);
  EXPECT_EQ(j.at("headdim"), 128);
  EXPECT_EQ(j.at("headdim_v"), 128);
  EXPECT_EQ(j.at("page_size"), 16);
  EXPECT_EQ(j.at("max_seqlen_q"), 1);
  EXPECT_EQ(j.at("max_seqlen_k"), 300);
  EXPECT_EQ(j.at("causal"), true);  // vLLM's builder always passes causal=True
  EXPECT_EQ(j.at("window_left"), -1);
  EXPECT_EQ(j.at("window_right"), -1);
  EXPECT_EQ(j.at("num_splits"), 32);  // the FULL graph's count, as passed
  EXPECT_EQ(j.at("e4m3"), false);
  EXPECT_EQ(j.at("in_call"), false);  // scheduled ahead: the driver prepares before the call
  EXPECT_EQ(j.at("expect").at("entries"), 13);
  EXPECT_EQ(j.at("expect").at("num_splits"), 32);
  const auto& at = j.at("at");
  EXPECT_EQ(at.at("scheduler_metadata"), fa3_slot(rq, a, "scheduler_metadata"));
  EXPECT_EQ(at.at("cu_seqlens_q"), fa3_slot(rq, a, "query_start_loc"));
  EXPECT_EQ(at.at("seqused_k"), fa3_slot(rq, a, "seq_lens"));
  // The no-roundup buffer: 9 entries, so FA3's semaphore (entry 12) lands in the after band.
  for (const auto& b : rq.buffers)
    if (b.name == "scheduler_metadata") {
      EXPECT_EQ(b.extent, 9);
    }
}

TEST(fa3_launch, eager_step_passes_zero_splits_and_a_window) {
  fa3_case c = fa3_eager_case();
  const gpu::gpu_request rq = fa3_request(c);
  const auto j = engine::fa3_scheduler_launch(rq, engine::make_engine_arena(rq));
  EXPECT_EQ(j.at("num_splits"), 0);  // eager: FA3's heuristic decides
  EXPECT_EQ(j.at("max_seqlen_q"), 17);
  EXPECT_EQ(j.at("expect").at("num_splits"), 14);
  EXPECT_EQ(j.at("expect").at("entries"), 13);
  // A sliding layer: vLLM sends window_size (window - 1, 0).
  engine_settings s;
  s.cg_mode = cudagraph_mode::none;
  c.plan = plan_fa3(s, c.st, fa3_group{48, 8, 128, 16, 512}, {});
  const auto w = engine::fa3_scheduler_launch(fa3_request(c), engine::make_engine_arena(fa3_request(c)));
  EXPECT_EQ(w.at("window_left"), 511);
  EXPECT_EQ(w.at("window_right"), 0);
}

// The request of c with its attention call, and the reference it fills.
gpu::gpu_request fa3_attention_request(const fa3_case& c, std::vector<float>& ref) {
  gpu::gpu_request rq = fa3_request(c);
  engine::fa3_attach_attention(c.request(), std::get<fa3_plan>(c.plan), rq, ref);
  return rq;
}

int64_t extent_of(const gpu::gpu_request& rq, const std::string& name) {
  for (const auto& b : rq.buffers)
    if (b.name == name) return b.extent;
  return -1;
}

TEST(fa3_launch, graph_decode_carries_the_layers_attention_call) {
  const fa3_case c = fa3_decode_case(false);
  std::vector<float> ref;
  const gpu::gpu_request rq = fa3_attention_request(c, ref);
  // q [1 token][4 heads][128], a cache of ceil(300 / 16) = 19 pages of 16 x 1 x 128, one table row;
  // the output and lse; 32 splits passed (the graph's), so out_accum [32][4][1][128].
  EXPECT_EQ(extent_of(rq, "q"), 4 * 128);
  EXPECT_EQ(extent_of(rq, "k_cache"), 19 * 16 * 128);
  EXPECT_EQ(extent_of(rq, "v_cache"), 19 * 16 * 128);
  EXPECT_EQ(extent_of(rq, "block_table"), 19);
  EXPECT_EQ(extent_of(rq, "output"), 4 * 128);
  EXPECT_EQ(extent_of(rq, "softmax_lse"), 4);
  EXPECT_EQ(extent_of(rq, "out_accum"), 32 * 4 * 128);
  EXPECT_EQ(extent_of(rq, "softmax_lse_accum"), 32 * 4);
  EXPECT_EQ(rq.buffers[static_cast<std::size_t>(rq.download)].name, "output");
  EXPECT_EQ(ref.size(), 4u * 128u);
  const auto a = engine::make_engine_arena(rq);
  const auto j = engine::fa3_scheduler_launch(rq, a).at("attention");
  EXPECT_EQ(j.at("num_heads"), 4);
  EXPECT_EQ(j.at("num_heads_k"), 1);
  EXPECT_EQ(j.at("headdim"), 128);
  EXPECT_EQ(j.at("num_splits"), 32);
  EXPECT_EQ(j.at("expect").at("num_splits"), 32);
  EXPECT_EQ(j.at("total_q"), 1);
  EXPECT_EQ(j.at("num_pages"), 19);
  EXPECT_EQ(j.at("pages_per_seq"), 19);
  EXPECT_EQ(j.at("kv_row_stride"), 128);  // separate K and V
  for (const char* name :
       {"q", "k_cache", "v_cache", "block_table", "output", "softmax_lse", "out_accum", "softmax_lse_accum"})
    EXPECT_EQ(j.at("at").at(name), fa3_slot(rq, a, name)) << name;
}

// vLLM's packed cache (#44455): K and V are views of one buffer, V from element D, and every
// kv-head row lies 2 x 128 elements from the next.
TEST(fa3_launch, a_packed_cache_is_one_buffer_with_two_views) {
  const fa3_case c = fa3_decode_case(false);
  run_request r = c.request();
  r.layout = kv_layout::packed;
  gpu::gpu_request rq = fa3_request(c);
  std::vector<float> ref;
  engine::fa3_attach_attention(r, std::get<fa3_plan>(c.plan), rq, ref);
  EXPECT_EQ(extent_of(rq, "kv_cache"), 19 * 16 * 2 * 128);
  EXPECT_EQ(extent_of(rq, "k_cache"), -1);
  const auto a = engine::make_engine_arena(rq);
  const auto j = engine::fa3_scheduler_launch(rq, a).at("attention");
  EXPECT_EQ(j.at("kv_row_stride"), 256);
  EXPECT_EQ(j.at("at").at("k_cache"), fa3_slot(rq, a, "kv_cache"));
  EXPECT_EQ(j.at("at").at("v_cache"), fa3_slot(rq, a, "kv_cache") + 128 * 2);
  EXPECT_EQ(j.at("num_pages"), 19);
  EXPECT_EQ(ref.size(), 4u * 128u);
}

// The call carries the layer's own window as vLLM's FlashAttentionImpl passes it: (256 - 1, 0).
TEST(fa3_launch, a_sliding_layers_call_carries_its_window) {
  std::vector<float> ref;
  const gpu::gpu_request rq = fa3_attention_request(fa3_window_case(), ref);
  const auto a = nlohmann::json::parse(rq.engine).at("fa3").at("attention");
  EXPECT_EQ(a.at("window_left"), 255);
  EXPECT_EQ(a.at("window_right"), 0);
  EXPECT_EQ(ref.size(), 128u);
}

// A call vLLM makes without scheduler_metadata (fa3_case.hpp): the layer's own geometry and window,
// the graph's 32 splits, and mha_fwd's own metadata tensor of exactly 13 entries.
TEST(fa3_launch, a_call_without_scheduler_metadata_prepares_itself) {
  const fa3_case c = fa3_in_call_case();
  std::vector<float> ref;
  const gpu::gpu_request rq = fa3_attention_request(c, ref);
  const auto j = engine::fa3_scheduler_launch(rq, engine::make_engine_arena(rq));
  EXPECT_EQ(j.at("in_call"), true);
  EXPECT_EQ(j.at("num_heads"), 64);
  EXPECT_EQ(j.at("num_heads_k"), 8);
  EXPECT_EQ(j.at("window_left"), 511);
  EXPECT_EQ(j.at("window_right"), 0);
  EXPECT_EQ(j.at("num_splits"), 32);
  EXPECT_EQ(j.at("expect").at("entries"), 13);
  EXPECT_EQ(extent_of(rq, "scheduler_metadata"), 13);
  const auto& a = j.at("attention");
  EXPECT_EQ(a.at("num_heads"), 64);
  EXPECT_EQ(a.at("window_left"), 511);
  EXPECT_EQ(a.at("num_splits"), 32);
  EXPECT_EQ(ref.size(), 2u * 64u * 128u);
}

// A DiffKV layer's call without scheduler_metadata (MiMo-V2's full layer at TP 1: 64 query heads over
// 4 kv heads, head size 192, v 128, blocks of 128; 100 new tokens over 400 keys, eager): the launch
// carries the layer's head size v, with which FA3's own rules read the blocks through TMA on 128-key
// tiles: 4 key blocks, so 1 split; 9 entries (no dynamic split, head swizzle). The attention call
// has vLLM's DiffKV cache, one buffer of 192 + 128 values to a kv-head row (V from value 192), and
// an output of 128 values to a head.
TEST(fa3_launch, a_diffkv_call_carries_its_head_size_v) {
  const fa3_case c = fa3_step_case(64, 4, 192, 128, 128, {100}, {400}, true);
  std::vector<float> ref;
  const gpu::gpu_request rq = fa3_attention_request(c, ref);
  const auto a = engine::make_engine_arena(rq);
  const auto j = engine::fa3_scheduler_launch(rq, a);
  EXPECT_EQ(j.at("headdim"), 192);
  EXPECT_EQ(j.at("headdim_v"), 128);
  EXPECT_EQ(j.at("page_size"), 128);
  EXPECT_EQ(j.at("expect").at("entries"), 9);
  EXPECT_EQ(j.at("expect").at("num_splits"), 1);
  const auto& at = j.at("attention");
  EXPECT_EQ(at.at("headdim"), 192);
  EXPECT_EQ(at.at("headdim_v"), 128);
  EXPECT_EQ(at.at("kv_row_stride"), 320);
  EXPECT_EQ(at.at("num_pages"), 4);  // ceil(400 / 128)
  EXPECT_EQ(extent_of(rq, "kv_cache"), 4 * 128 * 4 * 320);
  EXPECT_EQ(extent_of(rq, "v_cache"), -1);
  EXPECT_EQ(at.at("at").at("v_cache"), fa3_slot(rq, a, "kv_cache") + 192 * 2);
  EXPECT_EQ(extent_of(rq, "q"), 100 * 64 * 192);
  EXPECT_EQ(extent_of(rq, "output"), 100 * 64 * 128);
  EXPECT_EQ(extent_of(rq, "out_accum"), -1);  // unsplit
  EXPECT_EQ(ref.size(), 100u * 64u * 128u);
}

// The finding of docs/audit.md on the engine target (fa3_case.hpp, fa3_diffkv_case): scheduled with
// v taken as 192 (6 splits, 13 entries), run with v 128, whose out_accum and softmax_lse_accum
// mha_fwd sizes for its own 5 splits.
TEST(fa3_launch, a_diffkv_run_sizes_out_accum_for_its_own_v) {
  const fa3_case c = fa3_diffkv_case();
  std::vector<float> ref;
  const gpu::gpu_request rq = fa3_attention_request(c, ref);
  const auto j = engine::fa3_scheduler_launch(rq, engine::make_engine_arena(rq));
  EXPECT_EQ(j.at("headdim_v"), 192);  // the builder passes none: FA3's wrapper sends the head size
  EXPECT_EQ(j.at("expect").at("num_splits"), 6);
  EXPECT_EQ(j.at("expect").at("entries"), 13);
  EXPECT_EQ(j.at("attention").at("headdim_v"), 128);
  EXPECT_EQ(j.at("attention").at("num_splits"), 0);  // eager
  EXPECT_EQ(j.at("attention").at("expect").at("num_splits"), 5);
  EXPECT_EQ(extent_of(rq, "out_accum"), 5 * 64 * 10 * 128);
  EXPECT_EQ(extent_of(rq, "softmax_lse_accum"), 5 * 64 * 10);
  EXPECT_EQ(ref.size(), 10u * 64u * 128u);
}

// The GPU test's cases (fa3_driver_test.cpp) reach the kernels they are there for, worked by hand
// from tile_size.h and heuristics.h (132 SMs). Blocks of 128, 64 heads over 8, head size 128: the
// 128 x 128 causal tile, 17 x 8 = 136 packed rows > 128, so TMA; 17 tokens over 2,000 keys: 16
// n-blocks, 2 m-blocks x 8 kv heads = 16 tiles, 7 splits (16 x 7 / 132 = 0.848 >= 0.85 x 0.970);
// 300 over 600: 19 m-blocks x 8 = 152 tiles >= 0.8 x 132, 1 split. DiffKV 192 / 128 on blocks of
// 16: the 96-key tile without TMA, 21 n-blocks, 4 tiles, 18 splits (4 x 18 = 72 >= 0.85 x 84); 100
// over 400 on blocks of 128: TMA on 128 keys, 4 n-blocks, 1 split; 4 heads over 4, 300 over 400:
// TMA (300 rows > 128), 4 n-blocks, 1 split, no GQA group to pack.
TEST(fa3_launch, the_device_cases_reach_their_kernels) {
  struct want {
    fa3_case c;
    bool tma;
    int64_t splits;
  };
  const want cases[] = {{fa3_step_case(64, 8, 128, 128, 128, {17}, {2000}), true, 7},
                        {fa3_step_case(64, 8, 128, 128, 128, {300}, {600}), true, 1},
                        {fa3_step_case(64, 4, 192, 128, 16, {1}, {2000}), false, 18},
                        {fa3_step_case(64, 4, 192, 128, 128, {100}, {400}, true), true, 1},
                        {fa3_step_case(4, 4, 192, 128, 128, {300}, {400}, true), true, 1}};
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    const want& w = cases[i];
    const auto& plan = std::get<fa3_plan>(w.c.plan);
    SCOPED_TRACE(i);
    EXPECT_EQ(engine::fa3_attention_unsupported(w.c.request(), plan), "");
    EXPECT_EQ(fa3_paged_kv_tma(plan.run_call), w.tma);
    EXPECT_EQ(fa3_run_splits(plan, plan.run_call), w.splits);
  }
}

// Three decoding requests replay the graph of 4: the schedule's fourth row is padding (no token, no
// key), which the call keeps with an all-null page table row; the output covers the 3 tokens.
TEST(fa3_launch, a_padded_graph_replay_keeps_its_padding_rows) {
  const fa3_case c = fa3_padded_decode_case();
  ASSERT_EQ(std::get<fa3_plan>(c.plan).sched.batch, 4);
  std::vector<float> ref;
  const gpu::gpu_request rq = fa3_attention_request(c, ref);
  EXPECT_EQ(extent_of(rq, "block_table"), 4 * 19);  // ceil(300 / 16) pages a row
  EXPECT_EQ(extent_of(rq, "output"), 3 * 4 * 128);
  EXPECT_EQ(ref.size(), 3u * 4u * 128u);
  for (const auto& b : rq.buffers) {
    if (b.name != "block_table") continue;
    for (std::size_t i = 3 * 19 * 4; i < b.data.size(); ++i) EXPECT_EQ(b.data[i], std::byte{0}) << i;
  }
}

// The eager step run by a layer of 64 heads over the schedule of 48: mha_fwd sizes out_accum for the
// 7 splits of its own heuristic (fa3_case.hpp), not the 14 scheduled.
TEST(fa3_launch, out_accum_is_sized_for_the_layers_own_splits) {
  std::vector<float> ref;
  const gpu::gpu_request rq = fa3_attention_request(fa3_eager_case(64), ref);
  EXPECT_EQ(extent_of(rq, "out_accum"), 7 * 64 * 17 * 128);
  EXPECT_EQ(extent_of(rq, "softmax_lse_accum"), 7 * 64 * 17);
  const auto j = engine::fa3_scheduler_launch(rq, engine::make_engine_arena(rq)).at("attention");
  EXPECT_EQ(j.at("num_splits"), 0);  // eager: passed 0, as to the schedule
  EXPECT_EQ(j.at("expect").at("num_splits"), 7);
}

TEST(fa3_launch, no_attention_call_where_the_driver_cannot_make_it) {
  const fa3_case c = fa3_decode_case(false);
  const auto& plan = std::get<fa3_plan>(c.plan);
  for (int64_t d : {100, 320}) {  // mha_fwd raises: not a multiple of 8, above 256
    fa3_case other = c;
    other.layer.head_size = other.layer.head_size_v = d;
    EXPECT_NE(engine::fa3_attention_unsupported(other.request(), plan), "") << d;
  }
  for (int64_t d : {64, 80, 96, 192, 256}) {  // FA3's built head sizes, and 80 (rounded to 96)
    const fa3_case other = fa3_decode_case(false, d);
    EXPECT_EQ(engine::fa3_attention_unsupported(other.request(), std::get<fa3_plan>(other.plan)), "") << d;
  }
  // mha_fwd takes v 256 beside head size 64 (its 64 / 256 kernel), which the driver does not build.
  const fa3_case diff64 = fa3_step_case(8, 1, 64, 256, 16, {1}, {300});
  EXPECT_NE(engine::fa3_attention_unsupported(diff64.request(), std::get<fa3_plan>(diff64.plan)), "");
  run_request fp16 = c.request();
  fp16.kv_dtype = dtype::fp16;
  EXPECT_NE(engine::fa3_attention_unsupported(fp16, plan), "");
  // Scheduled unsplit for 128 heads over 128 kv heads (128 m-blocks: one split, 9 entries), run by
  // a layer of 64 over 8 that splits 7 ways (13 entries): mha_fwd's CHECK_SHAPE raises, a host check.
  fa3_case shape = fa3_eager_case(64);
  engine_settings s;
  s.cg_mode = cudagraph_mode::none;
  shape.plan = plan_fa3(s, shape.st, fa3_group{128, 128, 128}, {});
  EXPECT_NE(
      engine::fa3_attention_unsupported(shape.request(), std::get<fa3_plan>(shape.plan)).find("CHECK_SHAPE"),
      std::string::npos);
  std::vector<float> ref;
  const gpu::gpu_request rq = fa3_attention_request(shape, ref);
  EXPECT_EQ(extent_of(rq, "output"), -1);
  EXPECT_TRUE(ref.empty());
}

TEST(fa3_launch, sglang_schedules_and_bare_requests_are_refused) {
  const fa3_case c = fa3_decode_case(false);
  EXPECT_EQ(engine::fa3_unsupported(std::get<fa3_plan>(c.plan)), "");
  fa3_plan sglang = std::get<fa3_plan>(c.plan);
  sglang.sched_call.build = fa3_build::upstream;
  EXPECT_NE(engine::fa3_unsupported(sglang), "");
  const gpu::gpu_request bare = make_gpu_request(c.request(), nullptr);  // no schedule call
  EXPECT_THROW(engine::fa3_scheduler_launch(bare, engine::make_engine_arena(bare)), std::invalid_argument);
}

// The stand-in writes nothing: a no-roundup schedule that reached it comes back without the
// overrun the simulator reports for the same plan, and the attention call's output as poison,
// which the executor holds to the reference.
TEST(fa3_engine_routing, schedules_reach_fa3s_driver) {
  if (!use_standin_drivers()) GTEST_SKIP() << "no python3";
  ASSERT_EQ(engine_device_count(), 1);
  auto ex = make_engine_executor();
  const fa3_case c = fa3_decode_case(true);
  ASSERT_TRUE(ex->on_engine(c.request()));
  const observation o = ex->run(c.request());
  EXPECT_FALSE(o.faulted) << o.fault_detail;
  EXPECT_EQ(o.oob_count, 0);
  EXPECT_TRUE(o.output_checked);
  EXPECT_TRUE(o.output_mismatch) << "the stand-in computes no attention";
  EXPECT_EQ(ex->simulated(), 0);
  fa3_case sglang = fa3_decode_case(true);
  std::get<fa3_plan>(sglang.plan).sched_call.build = fa3_build::upstream;
  EXPECT_FALSE(ex->on_engine(sglang.request()));
  const observation sim = ex->run(sglang.request());
  EXPECT_EQ(ex->simulated(), 1);
  EXPECT_GT(sim.oob_count, 0);
}

}  // namespace
}  // namespace headroom
