// FlashInfer's decode and prefill on the engine target, host side (label cpu, no GPU, no FlashInfer
// build): the launch JSON of a split decode and of a split prefill run by hand (the page table
// FlashInfer reads, the NHD strides of vLLM's packed cache, every pointer at its buffer's payload),
// the geometry FlashInfer's kernels refuse, and the executor's routing with a stand-in driver in
// FlashInfer's place: a layer the kernel takes goes to the driver, one it does not runs on the
// simulator.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "core/backends/flashinfer.hpp"
#include "targets/engine/engine_arena.hpp"
#include "targets/engine/engine_executor.hpp"
#include "targets/engine/engine_run.hpp"
#include "targets/engine/flashinfer_launch.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "tests/engine_target/standin.hpp"

namespace headroom {
namespace {

// A FlashInfer decode run under CUDA graphs (so the plan splits and pads), planned for 4 query
// heads while the layer has 8: FlashInfer's tmp_v then holds half the rows the kernel writes.
struct fi_case {
  rank_layer layer{"model.layers.0.self_attn.attn", attn_kind::full, 8, 2, 64, 64, 0, 0};
  batch b = decode_batch(3, 40);
  any_plan plan;
  dtype type;
  explicit fi_case(int64_t heads = 8, dtype d = dtype::bf16) : type(d) {
    layer.num_heads = heads;
    flashinfer_options o;
    o.cuda_graph = true;
    plan = plan_fi_decode(4, 2, 64, d, b, o);
  }
  run_request request() const { return {&layer, type, 16, &plan, &b, 7, nullptr, 0, 0, kv_layout::packed}; }
};

std::size_t index_of(const gpu::gpu_request& rq, const std::string& name) {
  for (std::size_t i = 0; i < rq.buffers.size(); ++i)
    if (rq.buffers[i].name == name) return i;
  ADD_FAILURE() << "no buffer " << name;
  return 0;
}
int64_t slot_of(const gpu::gpu_request& rq, const engine::engine_arena& a, const std::string& name) {
  return a.slots[index_of(rq, name)].start;
}

TEST(flashinfer_launch, split_decode_by_hand) {
  const fi_case c;
  const auto& p = std::get<fi_decode_plan>(c.plan);
  ASSERT_TRUE(p.split);
  const gpu::gpu_request rq = make_gpu_request(c.request(), nullptr);
  const auto a = engine::make_engine_arena(rq);
  EXPECT_STREQ(engine::engine_of(rq), engine::flashinfer_engine);
  const auto j = engine::flashinfer_decode_launch(rq, a);
  EXPECT_EQ(j.at("kernel"), "flashinfer_batch_decode");
  EXPECT_EQ(j.at("dtype"), "bf16");
  EXPECT_EQ(j.at("num_qo_heads"), 8);  // the layer's heads: the kernel's, not the plan's 4
  EXPECT_EQ(j.at("num_kv_heads"), 2);
  EXPECT_EQ(j.at("head_dim"), 64);
  EXPECT_EQ(j.at("batch_size"), 3);
  EXPECT_EQ(j.at("padded"), p.padded);
  EXPECT_EQ(j.at("num_work"), p.num_work);
  EXPECT_EQ(j.at("kv_chunk_size"), p.kv_chunk_size);
  EXPECT_EQ(j.at("window_left"), -1);
  EXPECT_EQ(j.at("q_strides"), (std::vector<int64_t>{512, 64}));
  // vLLM's packed cache: a page of 16 tokens x 2 kv heads x (K and V, 64 each).
  EXPECT_EQ(j.at("kv_strides"), (std::vector<int64_t>{16 * 2 * 128, 2 * 128, 128}));
  // 40 tokens a request: 3 pages, the last holding 8 tokens; the table's rows are 3 wide.
  EXPECT_EQ(j.at("indptr"), (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(j.at("last_page_len"), (std::vector<int64_t>{8, 8, 8}));
  const auto& table = rq.buffers.at(index_of(rq, "block_table"));
  std::vector<int64_t> rows(9);
  for (int i = 0; i < 9; ++i) {
    int32_t v;
    std::memcpy(&v, table.data.data() + 4 * i, 4);
    rows[static_cast<std::size_t>(i)] = v;
  }
  EXPECT_EQ(j.at("indices"), rows);
  const auto& at = j.at("at");
  for (const char* name : {"q", "tmp_v", "tmp_s", "request_indices", "kv_tile_indices", "o_indptr"})
    EXPECT_EQ(at.at(name), slot_of(rq, a, name)) << name;
  EXPECT_EQ(at.at("o"), slot_of(rq, a, "output"));
  // K and V are one allocation: V starts 64 bf16 elements after K.
  EXPECT_EQ(at.at("v").get<int64_t>() - at.at("k").get<int64_t>(), 128);
}

TEST(flashinfer_launch, refuses_what_flashinfer_decode_does_not_run) {
  EXPECT_EQ(engine::flashinfer_unsupported(48, 8, 128, gpu::elem_type::bf16, false), "");
  EXPECT_EQ(engine::flashinfer_unsupported(64, 8, 512, gpu::elem_type::fp16, false), "");
  EXPECT_NE(engine::flashinfer_unsupported(40, 8, 128, gpu::elem_type::bf16, false), "");  // group 5
  EXPECT_NE(engine::flashinfer_unsupported(32, 2, 128, gpu::elem_type::bf16, false), "");  // group 16
  EXPECT_NE(engine::flashinfer_unsupported(8, 8, 96, gpu::elem_type::bf16, false), "");
  EXPECT_NE(engine::flashinfer_unsupported(8, 8, 128, gpu::elem_type::f32, false), "");
  const fi_case c(8, dtype::fp32);
  gpu::gpu_request rq = make_gpu_request(c.request(), nullptr);
  const auto a = engine::make_engine_arena(rq);
  EXPECT_THROW(engine::flashinfer_decode_launch(rq, a), std::invalid_argument);
  rq.fam = gpu::family::triton;
  EXPECT_THROW(engine::flashinfer_decode_launch(rq, a), std::invalid_argument);
}

// A FlashInfer prefill run under CUDA graphs (so the plan splits), planned for 4 query heads while
// the layer has `heads`: requests of 24 and 9 new tokens over 40 and 33.
struct fi_prefill_case {
  rank_layer layer{"model.layers.0.self_attn.attn", attn_kind::full, 8, 2, 64, 64, 0, 0};
  batch b{{40, 33}, {24, 9}};
  any_plan plan;
  dtype type;
  explicit fi_prefill_case(int64_t heads = 8, dtype d = dtype::bf16, int64_t head_size = 64) : type(d) {
    layer.num_heads = heads;
    layer.head_size = layer.head_size_v = head_size;
    flashinfer_options o;
    o.cuda_graph = true;
    plan = plan_fi_prefill(4, 2, head_size, b, o);
  }
  run_request request() const { return {&layer, type, 16, &plan, &b, 7, nullptr, 0, 0, kv_layout::packed}; }
};

TEST(flashinfer_launch, split_prefill_by_hand) {
  const fi_prefill_case c;
  const auto& p = std::get<fi_prefill_plan>(c.plan);
  ASSERT_TRUE(p.split_kv);
  const gpu::gpu_request rq = make_gpu_request(c.request(), nullptr);
  const auto a = engine::make_engine_arena(rq);
  EXPECT_STREQ(engine::engine_of(rq), engine::flashinfer_engine);
  EXPECT_THROW(engine::flashinfer_decode_launch(rq, a), std::invalid_argument);
  const auto j = engine::flashinfer_prefill_launch(rq, a);
  EXPECT_EQ(j.at("kernel"), "flashinfer_batch_prefill");
  EXPECT_EQ(j.at("num_qo_heads"), 8);  // the layer's heads: the kernel packs rows with group 4
  EXPECT_EQ(j.at("num_kv_heads"), 2);
  EXPECT_EQ(j.at("batch_size"), 2);
  EXPECT_EQ(j.at("cta_tile_q"), p.cta_tile_q);
  EXPECT_EQ(j.at("total_num_rows"), 33);  // 24 + 9 query rows for the merge
  EXPECT_EQ(j.at("padded"), p.padded_batch_size);
  EXPECT_FALSE(j.contains("num_work"));  // the plan's own mask travels in the arena
  EXPECT_EQ(j.at("split"), true);
  EXPECT_EQ(j.at("kv_chunk_size"), p.kv_chunk_size);
  EXPECT_EQ(j.at("q_strides"), (std::vector<int64_t>{512, 64}));
  EXPECT_EQ(j.at("kv_strides"), (std::vector<int64_t>{16 * 2 * 128, 2 * 128, 128}));
  // 40 and 33 tokens: 3 pages each, the last holding 8 and 1 tokens.
  EXPECT_EQ(j.at("indptr"), (std::vector<int64_t>{0, 3, 6}));
  EXPECT_EQ(j.at("last_page_len"), (std::vector<int64_t>{8, 1}));
  const auto& at = j.at("at");
  EXPECT_EQ(at.at("q_indptr"), slot_of(rq, a, "query_start"));
  for (const char* name : {"q", "tmp_v", "tmp_s", "request_indices", "qo_tile_indices", "kv_tile_indices",
                           "o_indptr", "merge_indptr", "block_valid_mask"})
    EXPECT_EQ(at.at(name), slot_of(rq, a, name)) << name;
  EXPECT_EQ(at.at("o"), slot_of(rq, a, "output"));
}

TEST(flashinfer_launch, refuses_what_flashinfer_prefill_does_not_run) {
  // Any whole group runs on the prefill kernel (5 and 16 too), not a partial one, not fp32.
  EXPECT_EQ(engine::flashinfer_unsupported(40, 8, 128, gpu::elem_type::bf16, true), "");
  EXPECT_EQ(engine::flashinfer_unsupported(32, 2, 256, gpu::elem_type::fp16, true), "");
  EXPECT_NE(engine::flashinfer_unsupported(12, 8, 128, gpu::elem_type::bf16, true), "");
  EXPECT_NE(engine::flashinfer_unsupported(8, 8, 80, gpu::elem_type::bf16, true), "");
  EXPECT_NE(engine::flashinfer_unsupported(8, 8, 128, gpu::elem_type::f32, true), "");
  EXPECT_TRUE(engine::fi_prefill_tile_built(128, 128));
  EXPECT_FALSE(engine::fi_prefill_tile_built(256, 128));  // FlashInfer never picks it there
  EXPECT_TRUE(engine::fi_prefill_tile_built(512, 32));
  fi_prefill_case c;
  auto& p = std::get<fi_prefill_plan>(c.plan);
  p.cta_tile_q = 32;  // not one the driver has at head size 64
  const gpu::gpu_request rq = make_gpu_request(c.request(), nullptr);
  EXPECT_THROW(engine::flashinfer_prefill_launch(rq, engine::make_engine_arena(rq)), std::invalid_argument);
}

// The stand-in driver (standin_driver.py) answers as FlashInfer's driver too (standin.hpp): it writes no
// output, so a run that reached it comes back with an unwritten output; the simulator's run would not.
TEST(flashinfer_engine_routing, decode_layers_flashinfer_takes_reach_its_driver) {
  if (!use_standin_drivers()) GTEST_SKIP() << "no python3";
  const std::string runs = ::testing::TempDir() + "fi_standin_runs.tsv";
  std::remove(runs.c_str());
  ::setenv(engine_runs_env, runs.c_str(), 1);
  ASSERT_EQ(engine_device_count(), 1);
  EXPECT_EQ(engine_kernels(), "vllm_triton,flashinfer,fa3");
  auto ex = make_engine_executor();
  const fi_case taken;
  EXPECT_TRUE(ex->on_engine(taken.request()));
  const observation o = ex->run(taken.request());
  EXPECT_FALSE(o.faulted) << o.fault_detail;
  EXPECT_TRUE(o.output_mismatch);
  EXPECT_NE(o.mismatch_detail.find("never written"), std::string::npos) << o.mismatch_detail;
  EXPECT_EQ(ex->simulated(), 0);

  const fi_case group5(10);  // 10 heads over 2 kv heads: no group FlashInfer's decode dispatches
  const fi_case fp32(8, dtype::fp32);
  EXPECT_FALSE(ex->on_engine(group5.request()));
  EXPECT_FALSE(ex->on_engine(fp32.request()));
  const observation sim = ex->run(fp32.request());
  EXPECT_EQ(ex->simulated(), 1);
  EXPECT_FALSE(sim.output_mismatch) << sim.mismatch_detail;

  // Prefill: group 5 runs on FlashInfer's prefill kernel, fp32 does not.
  const fi_prefill_case prefill, prefill5(10), prefill32(8, dtype::fp32);
  EXPECT_TRUE(ex->on_engine(prefill.request()));
  EXPECT_TRUE(ex->on_engine(prefill5.request()));
  EXPECT_FALSE(ex->on_engine(prefill32.request()));
  const observation po = ex->run(prefill.request());
  EXPECT_FALSE(po.faulted) << po.fault_detail;
  EXPECT_TRUE(po.output_mismatch);  // the stand-in wrote nothing: it reached the driver
  EXPECT_EQ(ex->simulated(), 1);

  // The run log names the kernel of every run, in order: decode on FlashInfer's, fp32 on the
  // simulator, prefill on FlashInfer's.
  ::unsetenv(engine_runs_env);
  std::ifstream log(runs);
  std::vector<std::string> kernels;
  for (std::string line; std::getline(log, line);)
    kernels.push_back(line.substr(0, line.find('\t', line.find('\t') + 1)));
  EXPECT_EQ(kernels, (std::vector<std::string>{"engine\tflashinfer_decode", "sim\tfi_decode",
                                               "engine\tflashinfer_prefill"}));
}

}  // namespace
}  // namespace headroom
