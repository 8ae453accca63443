// The engine-step bodies on the simulator (docs/catalogue.md C3-C8): each writes or reads past an
// undersized buffer exactly where the hand computation says, stays in bounds at the fixed size,
// and writes the values the computation gives; ctx.offset32 counts a wrap and returns the wrapped
// value; the Triton body on a dummy run's and a draft pass's engine-shaped inputs reads past the
// block table and past q under the mutants, and matches the reference when fixed.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/check/executor.hpp"
#include "core/sim/native_context.hpp"
#include "targets/sim/sim_executor.hpp"
#include "targets/sim/sim_launch.hpp"

namespace headroom {
namespace {

rank_layer small_layer() { return {"model.layers.0.self_attn.attn", attn_kind::full, 2, 1, 64, 64, 0, 0}; }

// A run of `plan` (and, when given, `step` on the engine's shapes) on the simulator.
struct sim_run {
  sim_executor sim;
  observation o;
  sim_run(const any_plan& plan, const batch& b, const engine_step* step = nullptr, int64_t max_num_seqs = 0,
          int64_t width = 0) {
    const rank_layer l = small_layer();
    run_request r{&l, dtype::bf16, 16, &plan, &b, 1, step, max_num_seqs, width};
    o = sim.run(r);
  }
  // The first out-of-bounds record of a buffer (index -1: none).
  int64_t first_oob(const std::string& name) const {
    for (const auto& a : o.oob)
      if (a.buffer == name) return a.index;
    return -1;
  }
};

// One decoding request, max_num_seqs 1: 13 entries (13 > 2 of #33841's max_num_seqs + 1). As FA3's
// kernel, the body writes each vector's one request (0, 4, 8) and the semaphore (12), never the
// padding: 3 writes past the end, the first at index 4.
TEST(MetaKernels, Fa3SchedulerWritesPastAnOldLayoutBuffer) {
  engine_settings s;
  s.max_num_seqs = 1;
  const engine_step st = forward_step(s, decode_batch(1, 300));
  fa3_mutants old;
  old.old_layout = true;
  sim_run bug(plan_fa3(s, st, {1, 1, 128}, old), st.b);
  EXPECT_EQ(bug.first_oob("scheduler_metadata"), 4);
  EXPECT_EQ(bug.o.oob_count, 3);
  sim_run fixed(plan_fa3(s, st, {1, 1, 128}, {}), st.b);
  EXPECT_EQ(fixed.o.oob_count, 0);
  const auto& t = fixed.o.touched;
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t[0].name, "scheduler_metadata");
  EXPECT_EQ(t[0].elems, 13);  // fixed capacity 1 + 4 * round_up(2, 4) = 17 holds it
}

// vllm-ascend's graph of 8 binds 9 rows into buffers of max_num_seqs = 4: indptr writes 5..9,
// last_page_len 4..8 past the end. Fixed (9 rows), the values land as the host computed them.
TEST(MetaKernels, RequestMetaFillsPastMaxNumSeqs) {
  engine_settings s;
  s.max_num_seqs = 4;
  s.flavour = engine_flavour::vllm_ascend;
  const engine_step st = realise_step(s, {step_kind::dummy, 8, true, 0}, {}, {});
  sim_run bug(plan_request_meta(s, st, 9, 16, {false, false, true}), st.b);
  EXPECT_EQ(bug.first_oob("paged_kv_indptr"), 5);
  EXPECT_EQ(bug.first_oob("paged_kv_last_page_len"), 4);
  EXPECT_EQ(bug.o.oob_count, 5 + 5);
  sim_run fixed(plan_request_meta(s, st, 9, 16, {}), st.b);
  EXPECT_EQ(fixed.o.oob_count, 0);
  for (const auto& b : fixed.sim.last().buffers)
    if (b.name == "paged_kv_indptr") {
      EXPECT_EQ(b.stats.touched, 10);
    }
}

// 32 requests of no work: the search ends at q_idx 32 and reads shared:prefix_sum[32] past its 32
// entries; 31 read the zero padding; any work keeps the search inside.
TEST(MetaKernels, MqaMetadataReadsPastSharedPrefixSum) {
  sim_run zeros(plan_mqa_meta(std::vector<int32_t>(32, 0)), decode_batch(32, 1));
  EXPECT_EQ(zeros.first_oob("shared:prefix_sum"), 32);
  sim_run padded(plan_mqa_meta(std::vector<int32_t>(31, 0)), decode_batch(31, 1));
  EXPECT_EQ(padded.o.oob_count, 0);
  sim_run ones(plan_mqa_meta(std::vector<int32_t>(32, 1)), decode_batch(32, 1));
  EXPECT_EQ(ones.o.oob_count, 0);
}

// One request of 132 splits of SPLIT_KV: 132 segments over 132 SMs, SM s takes request 0 split s.
TEST(MetaKernels, MqaMetadataSchedule) {
  sim::memory m;
  const mqa_meta_plan plan = plan_mqa_meta({static_cast<int32_t>(mqa_split_kv * mqa_num_sms)});
  const meta_params p = make_meta_params(m, plan, small_layer());
  run_checked(m, p);
  const auto out = m.download(std::get<mqa_metadata_params>(p).schedule);
  for (int64_t sm = 0; sm < mqa_num_sms; ++sm) {
    EXPECT_EQ(out[static_cast<std::size_t>(sm * 2)], 0);
    EXPECT_EQ(out[static_cast<std::size_t>(sm * 2 + 1)], sm);
  }
  EXPECT_EQ(out[static_cast<std::size_t>(mqa_num_sms * 2)], 1);  // the end sentinel: batch size
}

// Token 2^18 of 32 heads of 256: offset 2^31 + 8191 of the last element, wrapped to
// -2147475457 in 32 bits (counted once); in 64 bits exact and not counted.
TEST(MetaKernels, Offset32WrapsAndIsCounted) {
  const rank_layer l{"l", attn_kind::full, 32, 2, 256, 256, 0, 0};
  for (bool int32 : {true, false}) {
    sim::memory m;
    const meta_params p = make_meta_params(m, plan_offset_probe((1 << 18) + 1, int32), l);
    run_checked(m, p);
    const auto out = m.download(std::get<offset_probe_params>(p).out);
    const int64_t exact = (int64_t{1} << 31) + 8191;
    EXPECT_EQ(out[0], int32 ? exact - (int64_t{1} << 32) : exact);
    EXPECT_EQ(m.log.index_overflows, int32 ? 1 : 0);
  }
  sim::native_context native({1, 1, 1}, {1, 1, 1});
  EXPECT_EQ(native.offset32(1 << 18, 32 * 256, 31 * 256 + 255),
            (int64_t{1} << 31) + 8191 - (int64_t{1} << 32));
}

// The derived minimal C4 case: block size 16, max_model_len 128 (8 blocks a row), max_num_seqs 68,
// the FULL warm-up of 136 tokens: 68 requests of seq_len 136 read 9 blocks; the last row's ninth
// entry is block_table[68 * 8 = 544], past the table. Clamped to 128 the run is clean and right.
TEST(MetaKernels, TritonReadsPastTheBlockTableOnADummyRun) {
  engine_settings s;
  s.max_num_seqs = 68;
  s.max_model_len = 128;
  s.cg_mode = cudagraph_mode::full;
  const step_spec spec{step_kind::dummy, 136, false, 0};
  for (bool unclamped : {true, false}) {
    const engine_step st = realise_step(s, spec, {}, {false, unclamped, false});
    const any_plan plan = plan_triton(2, 1, 64, {}, s);
    sim_run r(plan, st.b, &st, 68, block_table_width(s, 16));
    EXPECT_EQ(r.first_oob("block_table"), unclamped ? 544 : -1);
    EXPECT_EQ(r.o.output_checked, !unclamped);
    EXPECT_FALSE(r.o.output_mismatch);
  }
}

// Draft pass 2 after a verify pass of 3 tokens for each of 2 requests: keeping the verify
// query_start [0, 3, 6] the body reads q rows up to 5 of a q of 2 rows (2 x 2 heads x 64 = 256
// elements: the first read past is index 256).
TEST(MetaKernels, TritonReadsPastQOnADraftPassWithVerifyMetadata) {
  engine_settings s;
  s.num_speculative_tokens = 2;
  batch verify = decode_batch(2, 50);
  verify.query_lens = {3, 3};
  for (bool reuse : {true, false}) {
    const engine_step st = realise_step(s, {step_kind::draft, 0, false, 2}, verify, {false, false, reuse});
    const any_plan plan = plan_triton(2, 1, 64, {}, s);
    sim_run r(plan, st.b, &st, s.max_num_seqs, block_table_width(s, 16));
    EXPECT_EQ(r.first_oob("q"), reuse ? 256 : -1);
    EXPECT_EQ(r.o.output_checked, !reuse);
    EXPECT_FALSE(r.o.output_mismatch);
  }
}

}  // namespace
}  // namespace headroom
