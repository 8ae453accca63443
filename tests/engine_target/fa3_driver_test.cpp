// FA3's own kernels on a device (label gpu; exits 77, skipped, without the FA3 driver or a device;
// $HEADROOM_FA3_DRIVER names the driver of a carried build): the schedules of fa3_case.hpp run
// through headroom_fa3_driver as the engine target runs them, and what FA3's kernels wrote is
// compared with the values worked by hand from FA3's code.
// Scheduler: the no-roundup buffer's overrun seen in its after band at entry 12 (the semaphore), the
// fixed buffer's entries, the padding FA3 leaves unwritten, and a plan whose layout FA3's rules
// contradict refused with both.
// Attention on that metadata: the output against the fp32 reference on the graph's decode, a padded
// replay and the eager step, with separate and packed caches; and the eager step scheduled for 48
// heads but run by a layer of 64, whose split 7 writes past out_accum and whose token 16 FA3 never computes.
// A call without scheduler_metadata, whose metadata FA3's launch prepares itself. Pages read through
// TMA; DiffKV layers (head size 192, v 128), and the schedule made without their v.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/numeric.hpp"
#include "kernels/reference.hpp"
#include "targets/engine/engine_run.hpp"
#include "targets/engine/fa3_attention_inputs.hpp"
#include "targets/engine/fa3_launch.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "tests/engine_target/fa3_case.hpp"

namespace headroom {
namespace {

std::unique_ptr<engine::driver_process> driver;

struct fa3_run {
  gpu::gpu_response resp;
  std::vector<int32_t> metadata;  // the buffer as the kernel left it (0xFF poison: never written)
  int32_t metadata_id = -1;
};

fa3_run run_on_fa3(const fa3_case& c, const std::string& engine_args = "") {
  gpu::gpu_request rq = make_gpu_request(c.request(), nullptr);
  rq.engine = engine_args.empty() ? engine::fa3_engine_args(std::get<fa3_plan>(c.plan)) : engine_args;
  fa3_run r;
  for (std::size_t i = 0; i < rq.buffers.size(); ++i)
    if (rq.buffers[i].name == "scheduler_metadata") r.metadata_id = static_cast<int32_t>(i);
  rq.download = r.metadata_id;
  r.resp = engine::run_engine(*driver, rq);
  if (!r.resp.runs.empty()) {
    const auto& out = r.resp.runs[0].output;
    r.metadata.resize(out.size() / 4);
    std::memcpy(r.metadata.data(), out.data(), r.metadata.size() * 4);
  }
  return r;
}

constexpr int32_t unwritten = -1;  // the scratch poison, 0xFFFFFFFF

TEST(fa3_driver, no_roundup_buffer_overrun_at_the_semaphore) {
  const fa3_run r = run_on_fa3(fa3_decode_case(true));
  ASSERT_EQ(r.resp.error, "");
  ASSERT_EQ(r.resp.runs.size(), 1u);
  const auto& run = r.resp.runs[0];
  ASSERT_FALSE(run.faulted) << run.fault;
  ASSERT_EQ(run.guards.size(), 1u);
  EXPECT_EQ(run.guards[0].buffer, r.metadata_id);
  EXPECT_GE(run.guards[0].first, 48);  // within entry 12, 12 bytes past the 9-entry buffer's end
  EXPECT_LE(run.guards[0].last, 51);
  EXPECT_EQ(r.metadata, (std::vector<int32_t>{4, unwritten, unwritten, unwritten, 3, unwritten, unwritten,
                                              unwritten, 1}));
}

// A run that wrote only inside its buffer, which holds `written` (entry, value) and the poison in
// every other entry.
void expect_in_bounds(const fa3_run& r, std::size_t entries,
                      const std::vector<std::pair<int, int32_t>>& written) {
  ASSERT_EQ(r.resp.error, "");
  const auto& run = r.resp.runs.at(0);
  ASSERT_FALSE(run.faulted) << run.fault;
  EXPECT_TRUE(run.guards.empty());
  std::vector<int32_t> want(entries, unwritten);
  for (const auto& [i, v] : written) want[static_cast<std::size_t>(i)] = v;
  EXPECT_EQ(r.metadata, want);
}

TEST(fa3_driver, fixed_buffer_holds_what_fa3_writes) {
  expect_in_bounds(run_on_fa3(fa3_decode_case(false)), 17, {{0, 4}, {4, 3}, {8, 1}, {12, 0}});
}

TEST(fa3_driver, eager_step_by_fa3s_heuristic) {
  expect_in_bounds(run_on_fa3(fa3_eager_case()), 13, {{0, 102}, {4, 8}, {8, 8}, {12, 0}});
}

TEST(fa3_driver, a_layout_fa3_contradicts_is_refused) {
  const fa3_case c = fa3_eager_case();
  auto args = nlohmann::json::parse(engine::fa3_engine_args(std::get<fa3_plan>(c.plan)));
  args["fa3"]["expect"]["num_splits"] = 13;  // the heuristic gives 14
  const fa3_run r = run_on_fa3(c, args.dump());
  EXPECT_NE(r.resp.error.find("FA3's rules give 13 entries and 14 splits"), std::string::npos)
      << r.resp.error;
}

// The attention call of case c through the driver: the response, the request's buffer names, the
// output as floats and its fp32 reference.
struct fa3_attention_run {
  gpu::gpu_response resp;
  std::vector<std::string> names;
  std::vector<float> out, ref;
  std::string guarded(std::size_t i) const {
    return names.at(static_cast<std::size_t>(resp.runs[0].guards[i].buffer));
  }
};

fa3_attention_run run_attention(const fa3_case& c, kv_layout layout = kv_layout::separate) {
  run_request r = c.request();
  r.layout = layout;
  const auto& plan = std::get<fa3_plan>(c.plan);
  EXPECT_EQ(engine::fa3_attention_unsupported(r, plan), "");
  gpu::gpu_request rq = make_gpu_request(r, nullptr);
  rq.engine = engine::fa3_engine_args(plan);
  fa3_attention_run a;
  engine::fa3_attach_attention(r, plan, rq, a.ref);
  for (const auto& b : rq.buffers) a.names.push_back(b.name);
  a.resp = engine::run_engine(*driver, rq);
  if (!a.resp.runs.empty()) {
    const auto& bytes = a.resp.runs[0].output;
    for (std::size_t i = 0; i + 1 < bytes.size() && a.out.size() < a.ref.size(); i += 2) {
      bf16 v;
      std::memcpy(&v.bits, bytes.data() + i, 2);
      a.out.push_back(to_float(v));
    }
  }
  return a;
}

void expect_clean_attention(const fa3_case& c, kv_layout layout = kv_layout::separate) {
  const fa3_attention_run a = run_attention(c, layout);
  ASSERT_EQ(a.resp.error, "");
  const auto& run = a.resp.runs.at(0);
  ASSERT_FALSE(run.faulted) << run.fault;
  EXPECT_TRUE(run.guards.empty()) << a.guarded(0);
  const auto cmp = compare_output(a.out, a.ref, dtype::bf16, c.layer.num_heads, c.layer.head_size_v);
  EXPECT_FALSE(cmp.mismatch) << cmp.detail;
  EXPECT_GT(cmp.max_abs_err, 0.0);  // bf16 rounding: a copy of the reference would be exact
}

TEST(fa3_attention, graph_decode_matches_the_reference) { expect_clean_attention(fa3_decode_case(false)); }

TEST(fa3_attention, eager_step_matches_the_reference) { expect_clean_attention(fa3_eager_case()); }

// FA3's kernels of its other head sizes, and head size 80 on the 96 kernel: the graph decode (32
// splits passed: the combine of head size v 64, and 128 above) and the eager step.
TEST(fa3_attention, other_head_sizes_match_the_reference) {
  for (int64_t d : {64, 80, 96, 192, 256}) {
    SCOPED_TRACE(d);
    expect_clean_attention(fa3_decode_case(false, d));
    expect_clean_attention(fa3_eager_case(48, d));
  }
}

// A sliding layer's call attends its window only (found by an FA3 campaign on the engine target while
// the call took the schedule's window: 1 of 128 elements outside tolerance).
TEST(fa3_attention, a_sliding_layer_matches_the_reference) { expect_clean_attention(fa3_window_case()); }

// A call without scheduler_metadata (a model of two window configs): FA3's launch prepares the
// layer's own metadata into the buffer, which the driver leaves unwritten (poisoned) until then.
TEST(fa3_attention, a_call_without_scheduler_metadata_prepares_itself) {
  expect_clean_attention(fa3_in_call_case());
}

// A graph replay's padding row runs with an all-null page table row and writes no output.
TEST(fa3_attention, a_padded_graph_replay_matches_the_reference) {
  expect_clean_attention(fa3_padded_decode_case());
}

// vLLM's packed cache: K and V as strided views of one buffer.
TEST(fa3_attention, packed_cache_matches_the_reference) {
  expect_clean_attention(fa3_decode_case(false), kv_layout::packed);
  expect_clean_attention(fa3_eager_case(), kv_layout::packed);
}

// Pages of whole key blocks, read through TMA (blocks of 128; 64 heads over 8 pack 17 tokens into
// 136 rows, past one m-block of 128): 17 tokens over 2,000 keys split 7 ways, and 300 over 600
// unsplit; separate and packed caches.
TEST(fa3_attention, pages_read_through_tma_match_the_reference) {
  expect_clean_attention(fa3_step_case(64, 8, 128, 128, 128, {17}, {2000}));
  expect_clean_attention(fa3_step_case(64, 8, 128, 128, 128, {300}, {600}));
  expect_clean_attention(fa3_step_case(64, 8, 128, 128, 128, {17}, {2000}), kv_layout::packed);
}

// vLLM's DiffKV layers on FA3's 192 / 128 kernel (head size 192, v 128, a cache of 320 values to a
// kv-head row): MiMo-V2's full layer decoding over 2,000 keys on blocks of 16, scheduled ahead (read
// without TMA, a 96-key tile for v 128 or 192 alike, so schedule and run agree, split); the same
// layer's 100 tokens over 400 keys on blocks of 128, prepared in the call (through TMA, unsplit,
// packed GQA); and 4 heads over 4 (FA3 packs no GQA without a group: the unpacked kernel).
TEST(fa3_attention, diffkv_layers_match_the_reference) {
  expect_clean_attention(fa3_step_case(64, 4, 192, 128, 16, {1}, {2000}));
  expect_clean_attention(fa3_step_case(64, 4, 192, 128, 128, {100}, {400}, true));
  expect_clean_attention(fa3_step_case(4, 4, 192, 128, 128, {300}, {400}, true));
}

// The finding of docs/audit.md on FA3's own kernels (fa3_case.hpp, fa3_diffkv_case): the decode
// request was given 6 splits by a schedule made with v taken as 192, and the run, with v 128,
// allocates out_accum and softmax_lse_accum for 5. A split past them shows in an after band that
// starts at the buffer's end.
TEST(fa3_attention, a_diffkv_schedule_without_v_runs_past_out_accum) {
  const fa3_attention_run a = run_attention(fa3_diffkv_case(), kv_layout::packed);
  ASSERT_EQ(a.resp.error, "");
  const auto& run = a.resp.runs.at(0);
  ASSERT_FALSE(run.faulted) << run.fault;
  const int64_t split = int64_t{64} * 10;  // one split's rows: heads x tokens
  bool past = false;
  for (std::size_t i = 0; i < run.guards.size(); ++i) {
    std::printf("guard %s: bytes %lld-%lld (%lld changed)\n", a.guarded(i).c_str(),
                static_cast<long long>(run.guards[i].first), static_cast<long long>(run.guards[i].last),
                static_cast<long long>(run.guards[i].corrupted_bytes));
    if (a.guarded(i) == "out_accum") past |= run.guards[i].first >= 5 * split * 128 * 4;
    if (a.guarded(i) == "softmax_lse_accum") past |= run.guards[i].first >= 5 * split * 4;
  }
  EXPECT_TRUE(past) << "no split written past the run's 5";
  const auto cmp = compare_output(a.out, a.ref, dtype::bf16, 64, 128);
  std::printf("output: %s\n", cmp.mismatch ? cmp.detail.c_str() : "matches the reference");
}

TEST(fa3_attention, a_layer_of_more_heads_runs_past_out_accum_and_skips_a_token) {
  const fa3_case c = fa3_eager_case(64);
  const fa3_attention_run a = run_attention(c);
  ASSERT_EQ(a.resp.error, "");
  const auto& run = a.resp.runs.at(0);
  ASSERT_FALSE(run.faulted) << run.fault;
  bool out_accum = false;
  for (std::size_t i = 0; i < run.guards.size(); ++i) {
    std::printf("guard %s: bytes %lld-%lld (%lld changed)\n", a.guarded(i).c_str(),
                static_cast<long long>(run.guards[i].first), static_cast<long long>(run.guards[i].last),
                static_cast<long long>(run.guards[i].corrupted_bytes));
    if (a.guarded(i) != "out_accum") continue;
    out_accum = true;
    EXPECT_EQ(run.guards[i].first, int64_t{7} * 64 * 17 * 128 * 4);  // split 7 starts at the end
  }
  EXPECT_TRUE(out_accum);
  const int64_t row = 64 * 128;  // one token's output
  ASSERT_EQ(a.out.size(), static_cast<std::size_t>(17 * row));
  const std::vector<float> first(a.out.begin(), a.out.begin() + 16 * row),
      last(a.out.begin() + 16 * row, a.out.end());
  const auto computed = compare_output(first, std::vector<float>(a.ref.begin(), a.ref.begin() + 16 * row),
                                       dtype::bf16, 64, 128);
  EXPECT_FALSE(computed.mismatch) << computed.detail;
  const auto skipped =
      compare_output(last, std::vector<float>(a.ref.begin() + 16 * row, a.ref.end()), dtype::bf16, 64, 128);
  EXPECT_TRUE(skipped.mismatch);
  std::printf("token 16: %lld of %lld elements wrong (%s)\n", static_cast<long long>(skipped.bad),
              static_cast<long long>(row), skipped.detail.c_str());
}

}  // namespace
}  // namespace headroom

int main(int argc, char** argv) {
  using namespace headroom;
  const char* env = std::getenv(engine::fa3_driver_env);  // a build carried elsewhere
  const char* exe = env && *env ? env : HEADROOM_FA3_DRIVER_PATH;
  if (!*exe) {
    std::printf("this build has no FA3 driver (configure with -DHEADROOM_FA3_DIR): skipped\n");
    return 77;
  }
  driver = std::make_unique<engine::driver_process>(std::vector<std::string>{exe});
  const auto hello = driver->hello();
  if (hello.value("device_count", 0) == 0) {
    std::printf("no device for the FA3 driver (%s): skipped\n", hello.dump().c_str());
    return 77;
  }
  std::printf("FA3 driver: %s\n", hello.dump().c_str());
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
