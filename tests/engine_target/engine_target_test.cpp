// The engine target's host side (label cpu, no GPU, no engine checkout): the guarded arena's image
// and band check by hand, a Triton run's vLLM launch arguments by hand, and the whole path through
// the executor with a stand-in driver: an overrun past a plan buffer is reported as guard
// corruption of that buffer, an output the kernel never wrote as a mismatch, and a driver that dies
// mid-run as a fault, after which the next run starts a fresh worker. The input cap per target: a
// run's inputs are refused above the cap of the target that runs its kernel.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <variant>

#include "core/backends/triton.hpp"
#include "core/util/error.hpp"
#include "targets/engine/engine_arena.hpp"
#include "targets/engine/engine_executor.hpp"
#include "targets/engine/vllm_triton_launch.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "targets/gpu/memory/canary.hpp"

namespace headroom {
namespace {

gpu::gpu_request two_buffers() {
  gpu::gpu_request rq;
  gpu::wire_buffer in{"a", 4, 2, false, {}};
  for (int i = 0; i < 8; ++i) in.data.push_back(static_cast<std::byte>(i));
  gpu::wire_buffer out{"s", 4, 4, true, {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}}};
  rq.buffers = {in, out};
  rq.download = 1;
  rq.guards = {64, 4, 128, 2, 1024};
  return rq;
}

TEST(engine_arena, layout_fill_and_readback_by_hand) {
  const auto rq = two_buffers();
  const auto a = engine::make_engine_arena(rq);
  // a: band [0, 256), payload [256, 264), canaries [264, 328); s: band [328, 512), payload
  // [512, 528), canaries [528, 592) (max(64, 4 x 16) = 64 bytes, all checked); tail min(1024, 2 x 16).
  EXPECT_EQ(a.bytes, 624);
  const std::vector<std::pair<int64_t, int64_t>> fill = {{0, 256},   {256, 8},  {264, 64},
                                                         {328, 184}, {512, 16}, {528, 64}};
  ASSERT_EQ(a.fill.size(), fill.size());
  for (std::size_t i = 0; i < fill.size(); ++i)
    EXPECT_EQ(std::pair(a.fill[i].offset, a.fill[i].bytes), fill[i]) << i;
  ASSERT_EQ(a.fill_bytes.size(), 592u);
  EXPECT_EQ(a.fill_bytes[0], std::byte{gpu::canary_byte(0)});
  EXPECT_EQ(a.fill_bytes[256 + 7], std::byte{7});                    // a's last data byte
  EXPECT_EQ(a.fill_bytes[256 + 8 + 64 + 184 + 3], std::byte{4});     // s's host-written prefix
  EXPECT_EQ(a.fill_bytes[256 + 8 + 64 + 184 + 4], std::byte{0xFF});  // then the poison
  EXPECT_EQ(a.fill_bytes[591], std::byte{gpu::canary_byte(591)});
  const std::vector<std::pair<int64_t, int64_t>> back = {
      {0, 256}, {264, 64}, {328, 184}, {528, 64}, {512, 16}};
  ASSERT_EQ(a.readback.size(), back.size());
  for (std::size_t i = 0; i < back.size(); ++i)
    EXPECT_EQ(std::pair(a.readback[i].offset, a.readback[i].bytes), back[i]) << i;
}

// The bytes a driver sends back when nothing changed, with `output` as the download.
std::vector<std::byte> untouched(const engine::engine_arena& a, std::byte output) {
  std::vector<std::byte> b;
  for (std::size_t i = 0; i + 1 < a.readback.size(); ++i)
    for (int64_t k = 0; k < a.readback[i].bytes; ++k)
      b.push_back(std::byte{gpu::canary_byte(a.readback[i].offset + k)});
  b.insert(b.end(), static_cast<std::size_t>(a.readback.back().bytes), output);
  return b;
}

TEST(engine_arena, changed_canaries_are_reported_with_offsets_from_the_payload) {
  const auto rq = two_buffers();
  const auto a = engine::make_engine_arena(rq);
  gpu::run_result clean;
  engine::judge_readback(rq, a, untouched(a, std::byte{9}), clean);
  EXPECT_TRUE(clean.guards.empty());
  EXPECT_EQ(clean.output, std::vector<std::byte>(16, std::byte{9}));

  auto b = untouched(a, std::byte{9});
  b[255] = ~b[255];  // a's before band, one byte below its payload
  for (int k = 0; k < 3; ++k) b[256 + 64 + 184 + k] = ~b[256 + 64 + 184 + k];  // s's first 3 canaries
  gpu::run_result r;
  engine::judge_readback(rq, a, b, r);
  ASSERT_EQ(r.guards.size(), 2u);
  EXPECT_EQ(r.guards[0].buffer, 0);
  EXPECT_EQ(r.guards[0].first, -1);
  EXPECT_EQ(r.guards[0].corrupted_bytes, 1);
  EXPECT_EQ(r.guards[1].buffer, 1);
  EXPECT_EQ(r.guards[1].first, 16);  // the first byte past s's 16-byte payload
  EXPECT_EQ(r.guards[1].last, 18);
  EXPECT_EQ(r.guards[1].corrupted_bytes, 3);

  b.pop_back();
  gpu::run_result short_back;
  EXPECT_THROW(engine::judge_readback(rq, a, b, short_back), std::invalid_argument);
}

// A Triton decode run whose plan was made for 4 query heads and whose layer has 8: the case of the
// model-wide regression, small.
struct triton_case {
  rank_layer layer{"model.layers.0.self_attn.attn", attn_kind::full, 8, 2, 64, 64, 0, 0};
  batch b = decode_batch(3, 40);
  any_plan plan = plan_triton(4, 2, 64, triton_options{}, engine_settings{});
  run_request request() const {
    return {&layer, dtype::bf16, 16, &plan, &b, 7, nullptr, 0, 0, kv_layout::packed};
  }
};

TEST(vllm_triton_launch, views_and_scalars_by_hand) {
  const triton_case c;
  gpu::gpu_request rq = make_gpu_request(c.request(), nullptr);
  const int64_t thr = std::get<triton_plan>(c.plan).thr;
  rq.engine = engine::vllm_triton_engine_args(thr, 16);
  const auto a = engine::make_engine_arena(rq);
  const auto j = engine::vllm_triton_launch(rq, a);
  const auto& v = j.at("views");
  EXPECT_EQ(v.at("q").at("shape"), (std::vector<int64_t>{3, 8, 64}));
  EXPECT_EQ(v.at("q").at("strides"), (std::vector<int64_t>{512, 64, 1}));
  EXPECT_EQ(v.at("q").at("dtype"), "bfloat16");
  // vLLM's packed cache [blocks][16][2][2 x 64]: K and V are views of one buffer, V 64 elements in.
  EXPECT_EQ(v.at("k").at("strides"), (std::vector<int64_t>{4096, 256, 128, 1}));
  EXPECT_EQ(v.at("k").at("buffer"), v.at("v").at("buffer"));
  EXPECT_EQ(v.at("v").at("offset").get<int64_t>() - v.at("k").at("offset").get<int64_t>(), 64);
  EXPECT_EQ(v.at("k").at("shape")[1], 16);
  EXPECT_EQ(v.at("k").at("shape")[2], 2);
  EXPECT_EQ(v.at("block_table").at("shape")[0], 3);
  EXPECT_EQ(v.at("block_table").at("shape")[1], 3);  // ceil(40 / 16) blocks a request
  EXPECT_EQ(v.at("seq_lens").at("shape"), (std::vector<int64_t>{3}));
  EXPECT_EQ(v.at("query_start").at("shape"), (std::vector<int64_t>{4}));
  // The plan's buffer whole, as the builder allocates it for 4 heads: thr x 4 x 16 x 64 floats.
  EXPECT_EQ(v.at("segm_output").at("shape"), (std::vector<int64_t>{thr * 4 * 16 * 64}));
  EXPECT_EQ(v.at("segm_max").at("shape"), (std::vector<int64_t>{thr * 4 * 16}));
  EXPECT_EQ(j.at("seq_threshold_3D"), thr);
  EXPECT_EQ(j.at("num_par_softmax_segments"), 16);
  EXPECT_EQ(j.at("max_seqlen_q"), 1);
  EXPECT_EQ(j.at("max_seqlen_k"), 40);
  EXPECT_EQ(j.at("sliding_window"), 0);
  EXPECT_EQ(v.at("q").at("start").get<int64_t>() % 256, 0);

  rq.engine.clear();
  EXPECT_THROW(engine::vllm_triton_launch(rq, a), std::invalid_argument);
  rq.fam = gpu::family::fi_decode;
  EXPECT_THROW(engine::vllm_triton_launch(rq, a), std::invalid_argument);
}

// vLLM's TritonAttentionBackend.supports_head_size is head_size >= 32: smaller layers never reach
// its kernel (whose tl.dot needs 16-wide tiles), so the engine target runs them on the simulator.
TEST(vllm_triton_launch, head_sizes_below_32_are_not_the_engines) {
  EXPECT_EQ(engine::vllm_triton_unsupported(32), "");
  EXPECT_EQ(engine::vllm_triton_unsupported(40), "");
  EXPECT_EQ(engine::vllm_triton_unsupported(576), "");
  EXPECT_NE(engine::vllm_triton_unsupported(31), "");
  EXPECT_NE(engine::vllm_triton_unsupported(16), "");
  EXPECT_NE(engine::vllm_triton_unsupported(1), "");
}

// A layer past the simulator's 2^26 q elements (bench_gpu_prefill's geometry at TP 1, `requests` x
// `len` tokens of causal prefill) and what its run's inputs are refused with, if they are.
struct large_case {
  rank_layer layer{"model.layers.1.self_attn.attn", attn_kind::full, 64, 8, 128, 128, 0, 0};
  batch b;
  any_plan plan;
  large_case(int64_t requests, int64_t len, int64_t head_size = 128) {
    layer.head_size = layer.head_size_v = head_size;
    b.seq_lens.assign(static_cast<std::size_t>(requests), len);
    b.query_lens = b.seq_lens;
    plan = plan_triton(64, 8, head_size, triton_options{}, engine_settings{});
  }
  run_request request() const {
    return {&layer, dtype::bf16, 16, &plan, &b, 1, nullptr, 0, 0, kv_layout::packed};
  }
};

template <class Run>
std::string refusal(Run run) {
  try {
    run();
  } catch (const input_error& e) {
    return e.value() + ": " + e.why();
  }
  return "accepted";
}

// The cap follows the target: the GPU target's request refuses 4x4096 (2^27 q elements) as the
// simulator does, the engine target's takes it (not built here: 256 MiB of q) and refuses 8x8192
// (2^29). Each refusal comes before any value is made.
TEST(engine_input_cap, make_gpu_request_refuses_above_its_targets_cap) {
  const large_case mid(4, 4096), huge(8, 8192);
  const std::string layer = "layer model.layers.1.self_attn.attn: too large for ";
  EXPECT_EQ(refusal([&] { make_gpu_request(mid.request(), nullptr); }),
            "134217728 q elements: " + layer + "the simulator (at most 2^26)");
  EXPECT_EQ(refusal([&] { make_gpu_request(mid.request(), nullptr, target_kind::gpu); }),
            "134217728 q elements: " + layer + "the simulator (at most 2^26)");
  EXPECT_EQ(refusal([&] { make_gpu_request(huge.request(), nullptr, target_kind::engine); }),
            "536870912 q elements: " + layer + "the engine target's arena image (at most 2^28)");
}

// The executor with the stand-in driver (standin_driver.py): the engine worker, the driver
// protocol, the host band check and the GPU executor's observation, end to end.
class engine_executor_standin : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("python3 -c 'import socket' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
    mode_file_ = ::testing::TempDir() + "engine_standin_mode";
    ::setenv("HEADROOM_STANDIN_MODE_FILE", mode_file_.c_str(), 1);
    ::setenv("HEADROOM_ENGINE_DRIVER", HEADROOM_STANDIN_DRIVER, 1);
    ::setenv("HEADROOM_REAL_DRIVER_DIR", HEADROOM_REAL_DRIVER_DIR, 1);
  }
  void mode(const std::string& m) { std::ofstream(mode_file_) << m << "\n"; }
  std::string mode_file_;
};

TEST_F(engine_executor_standin, overrun_unwritten_output_and_a_dying_driver) {
  ASSERT_EQ(engine_device_count(), 1);
  auto ex = make_engine_executor();
  EXPECT_EQ(ex->kind(), target_kind::engine);
  const triton_case c;

  mode("overrun segm_output 12");
  const observation o = ex->run(c.request());
  EXPECT_FALSE(o.faulted) << o.fault_detail;
  EXPECT_TRUE(o.guard_corrupted);
  EXPECT_NE(o.guard_detail.find("segm_output: 12 canary bytes changed"), std::string::npos) << o.guard_detail;
  EXPECT_TRUE(o.output_checked);
  EXPECT_TRUE(o.output_mismatch);  // the stand-in wrote no output: every element still poison
  EXPECT_NE(o.mismatch_detail.find("never written"), std::string::npos) << o.mismatch_detail;

  mode("ok");
  const observation clean = ex->run(c.request());
  EXPECT_FALSE(clean.guard_corrupted) << clean.guard_detail;

  mode("raise");
  const observation raised = ex->run(c.request());
  EXPECT_TRUE(raised.faulted);
  EXPECT_NE(raised.fault_detail.find("raised: AssertionError: planted"), std::string::npos)
      << raised.fault_detail;

  auto* gx = &ex->kernels();
  EXPECT_EQ(gx->worker_starts(), 1);
  mode("fault");
  const observation died = ex->run(c.request());
  EXPECT_TRUE(died.faulted);
  mode("ok");
  const observation after = ex->run(c.request());  // a fresh worker and driver
  EXPECT_FALSE(after.faulted) << after.fault_detail;
  EXPECT_EQ(gx->worker_starts(), 2);
}

// Through the engine executor: a run on vLLM's kernel is refused at the engine target's cap, a run
// it leaves to the simulator (head size 16, below vLLM's Triton bound) at the simulator's: 9x8192
// at 64 heads of 16 is 75,497,472 q elements, inside the one and past the other.
TEST_F(engine_executor_standin, each_run_takes_the_cap_of_the_target_that_runs_it) {
  ASSERT_EQ(engine_device_count(), 1);
  auto ex = make_engine_executor();
  mode("ok");
  const large_case on_engine(8, 8192), on_sim(9, 8192, 16);
  EXPECT_NE(refusal([&] { ex->run(on_engine.request()); }).find("engine target's arena image (at most 2^28)"),
            std::string::npos);
  EXPECT_EQ(
      refusal([&] { ex->run(on_sim.request()); }),
      "75497472 q elements: layer model.layers.1.self_attn.attn: too large for the simulator (at most 2^26)");
}

}  // namespace
}  // namespace headroom
