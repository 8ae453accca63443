// The sim executor against the sizing model: what the kernels touch equals what the formulas say
// they need (exactly, out-of-bounds indices included); where the model says "fits" the sim sees no
// out-of-bounds access and matches the reference, where it says "overflows" the sim sees
// out-of-bounds accesses in the buffers the model named. And the Laguna XS.2 Triton thresholds
// (first failing decode batch 13 / 25 / 49 / 97 at tp 1 / 2 / 4 / 8), now observed.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <variant>

#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"
#include "core/check/executor.hpp"
#include "kernels/inputs.hpp"
#include "targets/sim/sim_executor.hpp"

namespace headroom {
namespace {

struct run_case {
  rank_layer layer;
  batch b;
  any_plan plan;
  dtype d = dtype::bf16;
  int64_t block_size = 16;
  run_request request(uint64_t seed) const {
    run_request r;
    r.layer = &layer;
    r.kv_dtype = d;
    r.block_size = block_size;
    r.plan = &plan;
    r.b = &b;
    r.seed = seed;
    return r;
  }
};

// Buffers the model says a run needs more of than the plan holds.
std::set<std::string> overflowing(const any_plan& plan, const std::vector<buffer_need>& needs) {
  std::set<std::string> out;
  for (const auto& n : needs) {
    const buffer_plan* b = find_buffer(plan_buffers(plan), n.name);
    if (b && n.elems > b->capacity_elems()) out.insert(n.name);
  }
  return out;
}

// The observed touched equals the model's needs; fits => clean, overflows => attributed OOB.
void check_against_model(const run_case& c, uint64_t seed, const std::string& what) {
  sim_executor sim;
  model_executor model;
  const observation o = sim.run(c.request(seed));
  const observation m = model.run(c.request(seed));
  ASSERT_EQ(o.touched.size(), m.touched.size()) << what;
  for (std::size_t i = 0; i < o.touched.size(); ++i) {
    EXPECT_EQ(o.touched[i].name, m.touched[i].name) << what;
    EXPECT_EQ(o.touched[i].elem_bytes, m.touched[i].elem_bytes) << what;
    EXPECT_EQ(o.touched[i].elems, m.touched[i].elems) << what << " " << o.touched[i].name;
  }
  const auto over = overflowing(c.plan, m.touched);
  if (over.empty()) {
    EXPECT_EQ(o.oob_count, 0) << what << "\n" << sim.last().log.describe();
    EXPECT_FALSE(o.output_mismatch) << what << ": " << o.mismatch_detail;
    EXPECT_EQ(o.uninitialized_reads + o.races, 0) << what;
    return;
  }
  EXPECT_GT(o.oob_count, 0) << what;
  ASSERT_FALSE(o.oob.empty()) << what;
  for (const auto& a : o.oob) {
    EXPECT_TRUE(over.count(a.buffer)) << what << ": out of bounds in " << a.buffer;
    const buffer_plan* b = find_buffer(plan_buffers(c.plan), a.buffer);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(a.extent, b->capacity_elems()) << what;
    EXPECT_GE(a.index, a.extent) << what;
  }
}

std::string describe(const run_case& c) {
  std::string s = "H_l=" + std::to_string(c.layer.num_heads) + " KV=" + std::to_string(c.layer.num_kv_heads) +
                  " D=" + std::to_string(c.layer.head_size) + " seqs=" + std::to_string(c.b.num_seqs());
  for (auto len : c.b.seq_lens) s.append(" ").append(std::to_string(len));
  return s;
}

int64_t pick(splitmix64& rng, int64_t n) {
  return static_cast<int64_t>(rng.next() % static_cast<uint64_t>(n));
}

rank_layer layer(int64_t heads, int64_t kv, int64_t head_size, int64_t window = 0) {
  return {"model.layers.1.self_attn.attn",
          window ? attn_kind::sliding : attn_kind::full,
          heads,
          kv,
          head_size,
          head_size,
          window};
}

TEST(SimExecutor, TritonTouchedEqualsModelNeeds) {
  splitmix64 rng{101};
  for (int i = 0; i < 24; ++i) {
    run_case c;
    const int64_t kv = 1 + pick(rng, 2), g_l = 1 + pick(rng, 8), g_b = 1 + pick(rng, 8);
    const int64_t d = std::vector<int64_t>{64, 80, 128, 48}[static_cast<std::size_t>(pick(rng, 4))];
    c.layer = layer(kv * g_l, kv, d, pick(rng, 3) == 0 ? 1 + pick(rng, 64) : 0);
    triton_options o;
    o.snap_to_capture = false;
    o.cap_max_num_seqs = true;
    engine_settings e;
    e.max_num_seqs = 1 + pick(rng, 4);
    c.plan = plan_triton(kv * g_b, kv, d + pick(rng, 2) * 16, o, e);  // builder head size may differ
    const int64_t seqs = 1 + pick(rng, std::get<triton_plan>(c.plan).thr);
    for (int64_t s = 0; s < seqs; ++s) {
      c.b.seq_lens.push_back(1 + pick(rng, 300));
      c.b.query_lens.push_back(1);
    }
    c.d = static_cast<dtype>(pick(rng, 3));
    check_against_model(c, i, describe(c));
  }
}

TEST(SimExecutor, FlashInferTouchedEqualsModelNeeds) {
  splitmix64 rng{202};
  int overflows = 0;
  for (int i = 0; i < 24; ++i) {
    run_case c;
    static constexpr int64_t groups[] = {1, 2, 3, 4, 6, 8};
    const int64_t kv = 1 + pick(rng, 2), g_l = groups[pick(rng, 6)], g_b = groups[pick(rng, 6)];
    c.layer = layer(kv * g_l, kv, std::vector<int64_t>{64, 80, 128}[static_cast<std::size_t>(pick(rng, 3))]);
    const int64_t seqs = 1 + pick(rng, 4);
    for (int64_t s = 0; s < seqs; ++s) {
      c.b.seq_lens.push_back(1 + pick(rng, 400));
      c.b.query_lens.push_back(1);
    }
    c.d = static_cast<dtype>(pick(rng, 3));
    flashinfer_options o;
    o.cuda_graph = pick(rng, 4) == 0;
    c.plan = plan_fi_decode(kv * g_b, kv, c.layer.head_size, c.d, c.b, o);
    overflows +=
        !overflowing(c.plan, fi_decode_needs(std::get<fi_decode_plan>(c.plan), c.layer, c.d)).empty();
    check_against_model(c, i, describe(c));
  }
  EXPECT_GE(overflows, 4);
}

TEST(SimExecutor, TritonTwoDimensionalPathTouchesNoBuffer) {
  run_case c;
  c.layer = layer(64, 8, 128);
  c.plan = plan_triton(48, 8, 128, {});
  c.b.seq_lens = {40, 30};
  c.b.query_lens = {5, 30};  // prefill: the 2D kernel, whatever the heads
  sim_executor sim;
  const observation o = sim.run(c.request(3));
  EXPECT_TRUE(o.touched.empty());
  EXPECT_EQ(o.oob_count, 0);
  EXPECT_TRUE(o.output_checked);
  EXPECT_FALSE(o.output_mismatch) << o.mismatch_detail;
}

TEST(SimExecutor, ObservationIsDeterministic) {
  run_case c;
  c.layer = layer(16, 2, 64);
  c.plan = plan_triton(8, 2, 64, {});
  c.b = decode_batch(40, 70);  // thr = 64: the 3D path, and 40 x 16 heads > 64 x 8: OOB
  sim_executor a, b;
  const observation x = a.run(c.request(9)), y = b.run(c.request(9));
  EXPECT_GT(x.oob_count, 0);
  EXPECT_EQ(x.oob_count, y.oob_count);
  EXPECT_EQ(x.mismatch_detail, y.mismatch_detail);
  EXPECT_EQ(a.last().log.describe(), b.last().log.describe());
  ASSERT_EQ(x.oob.size(), y.oob.size());
  for (std::size_t i = 0; i < x.oob.size(); ++i) EXPECT_EQ(x.oob[i].index, y.oob[i].index);
}

// Laguna XS.2 with the model-wide head count: H_b = 48/tp, H_l = 64/tp (its sliding-window layers,
// window 512), KV = 8/tp, D = 128, seq len 256 (all 16 segments active). Out of bounds exactly
// above 12 x tp sequences.
TEST(SimExecutor, LagunaTritonThresholdsObserved) {
  for (int64_t tp : {1, 2, 4, 8}) {
    const int64_t kv = 8 / tp;
    run_case c;
    c.layer = layer(64 / tp, kv, 128, 512);
    c.plan = plan_triton(48 / tp, kv, 128, {});
    ASSERT_EQ(std::get<triton_plan>(c.plan).thr, 16 * tp);
    const int64_t first_failing = 12 * tp + 1;
    const int64_t from = tp == 1 ? 1 : first_failing - 1, to = tp == 1 ? 16 : first_failing;
    for (int64_t n = from; n <= to; ++n) {
      c.b = decode_batch(n, 256);
      const std::string what = "tp " + std::to_string(tp) + " batch " + std::to_string(n);
      sim_executor sim;
      const observation o = sim.run(c.request(static_cast<uint64_t>(n)));
      EXPECT_EQ(o.oob_count > 0, n >= first_failing) << what;
      if (n >= first_failing) {
        ASSERT_FALSE(o.oob.empty());
        EXPECT_EQ(o.oob[0].buffer, "segm_output") << what;
        EXPECT_TRUE(o.oob[0].write) << what;
        EXPECT_TRUE(o.output_mismatch) << what;  // dropped stores: the reduce reads poison
      } else {
        EXPECT_FALSE(o.output_mismatch) << what << ": " << o.mismatch_detail;
      }
      if (tp > 1 || n == 13) check_against_model(c, static_cast<uint64_t>(n), what);
    }
  }
}

}  // namespace
}  // namespace headroom
