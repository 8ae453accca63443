// Plan files (docs/plan-schema.md): the mirror's plan pinned against hand-computed sizes, JSON
// round trips, verify on an edited plan, replay of its cases, and the malformed-plan errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/check/plan_file.hpp"
#include "core/util/error.hpp"
#include "tests/support/laguna.hpp"

namespace headroom {
namespace {

using nlohmann::json;

plan_file laguna_plan(std::vector<int64_t> tps, policy pol = policy::per_layer) {
  check_options o;
  o.tps = std::move(tps);
  o.pol = pol;
  return mirror_plan(testing::laguna_xs2(), o);
}

const builder_dump& group_of(const plan_file& p, std::size_t rank, backend be, int index) {
  for (const auto& g : p.ranks.at(rank).groups)
    if (g.be == be && g.index == index) return g;
  throw std::runtime_error("no such group");
}

std::optional<int64_t> first_failure(const report& r, backend be, int index) {
  for (const auto& t : r.thresholds)
    if (t.be == be && t.group == index && t.variable.empty()) return t.min_failing_decode_batch;
  return std::nullopt;
}

TEST(Plan, MirrorSizesMatchTheHandComputation) {
  const plan_file p = laguna_plan({1, 8}, policy::model_wide);
  // Model-wide heads: 48 // tp for every group; seq_threshold_3D = 128 // (8 // tp).
  const builder_dump& tp1 = group_of(p, 0, backend::triton, 1);
  EXPECT_EQ(tp1.parameters.at("num_heads_q"), 48);
  EXPECT_EQ(tp1.parameters.at("seq_threshold_3D"), 16);
  EXPECT_EQ(tp1.buffers.at(0).name, "softmax_segm_output");
  EXPECT_EQ(tp1.buffers.at(0).shape, (std::vector<int64_t>{16, 48, 16, 128}));
  EXPECT_EQ(tp1.buffers.at(0).bytes, 16 * 48 * 16 * 128 * 4);  // 6,291,456 (docs/engines.md §5)
  const builder_dump& tp8 = group_of(p, 1, backend::triton, 3);
  EXPECT_EQ(tp8.buffers.at(1).shape, (std::vector<int64_t>{128, 6, 16}));
  const builder_dump& fi = group_of(p, 0, backend::flashinfer, 0);
  EXPECT_EQ(fi.parameters.at("num_qo_heads"), 48);
  EXPECT_EQ(fi.buffers.at(0).bytes, int64_t{8192} * 48 * 128 * 16);  // above the 394 MiB floor
}

// vLLM's FlashInfer builder decodes on tensor cores (use_tensor_cores=True); VLLM_BATCH_INVARIANT
// disables split-KV and fixes the float workspace at 2 GiB (FlashInferMetadataBuilder.__init__ and
// _get_workspace_buffer at 8e958902). The dump carries both switches as parameters.
TEST(Plan, FlashInferDecodeSwitchesAreParameters) {
  check_options o;
  o.tps = {1};
  o.backends = {backend::flashinfer};
  const builder_dump d = group_of(mirror_plan(testing::laguna_xs2(), o), 0, backend::flashinfer, 0);
  EXPECT_EQ(d.parameters.at("use_tensor_cores"), 1);
  EXPECT_EQ(d.parameters.at("disable_split_kv"), 0);
  o.flashinfer.tensor_core_decode = false;
  o.flashinfer.disable_split_kv = true;
  const builder_dump b = group_of(mirror_plan(testing::laguna_xs2(), o), 0, backend::flashinfer, 0);
  EXPECT_EQ(b.parameters.at("use_tensor_cores"), 0);
  EXPECT_EQ(b.parameters.at("disable_split_kv"), 1);
  EXPECT_EQ(b.buffers.at(0).name, "float_workspace_buffer");
  EXPECT_EQ(b.buffers.at(0).bytes, int64_t{2048} << 20);  // not 8192 x 48 x 128 x 16
  // A dump may leave them out (the file's flashinfer options decide), not give another value.
  json j = to_json(mirror_plan(testing::laguna_xs2(), o));
  j["ranks"][0]["groups"][0]["parameters"]["use_tensor_cores"] = 2;
  EXPECT_THROW(plan_from_json(j, "p.json"), input_error);
  j["ranks"][0]["groups"][0]["parameters"].erase("use_tensor_cores");
  EXPECT_NO_THROW(plan_from_json(j, "p.json"));
}

TEST(Plan, JsonRoundTripsAndVerifiesLikeTheMirror) {
  const plan_file p = laguna_plan({1, 2});
  const plan_file back = plan_from_json(json::parse(to_json(p).dump()), "p.json");
  ASSERT_EQ(back.ranks.size(), 2u);
  EXPECT_EQ(back.ranks[1].groups, p.ranks[1].groups);
  model_executor model;
  EXPECT_TRUE(run_verify(back, model).ok);
  // The model-wide dump fails where check --policy model-wide does: batch 13 at TP 1.
  const report bad = run_verify(laguna_plan({1}, policy::model_wide), model);
  EXPECT_EQ(first_failure(bad, backend::triton, 1), 13);
  EXPECT_EQ(first_failure(bad, backend::triton, 0), std::nullopt);
}

TEST(Plan, OneRowShortFailsAtTheThresholdAndReplays) {
  plan_file p = laguna_plan({1});
  for (auto& g : p.ranks[0].groups)
    if (g.be == backend::triton && g.index == 2)
      g.buffers[1] = {"softmax_segm_max", "float32", {15, 64, 16}, 15 * 64 * 16 * 4};
  model_executor model;
  const report r = run_verify(p, model);
  ASSERT_FALSE(r.ok);
  for (const auto& v : r.violations) EXPECT_EQ(v.buffer, "softmax_segm_max");  // decode sweep, dummy runs
  const violation& v = r.violations.at(0);
  EXPECT_EQ(v.buffer, "softmax_segm_max");
  EXPECT_EQ(v.capacity_bytes, 15 * 64 * 16 * 4);
  EXPECT_EQ(v.required_bytes, 16 * 64 * 16 * 4);  // 16 requests x 64 heads x 16 segments
  EXPECT_EQ(first_failure(r, backend::triton, 2), 16);
  // The violation's case carries the dumps: as JSON and back, it fails again.
  const check_case again = case_from_json(json::parse(to_json(case_of(v)).dump()), "case.json");
  EXPECT_EQ(again.builders, case_of(v).builders);
  EXPECT_FALSE(again.builders.empty());
  const report replayed = run_case(again, model);
  ASSERT_FALSE(replayed.ok);
  EXPECT_EQ(replayed.violations.at(0).buffer, "softmax_segm_max");
  EXPECT_EQ(replayed.violations.at(0).detail.rfind("softmax_segm_max holds ", 0), 0u);
}

// FlashInfer's int workspace and its page-locked host copy: the mirror dumps FlashInfer's 8 MiB
// default for both; cut to 16 bytes, every plan fails at the first decode batch (its first two
// parts alone, 4 bytes each at offsets 0 and 16, end at 20), each named as dumped.
TEST(Plan, IntWorkspaceCutBelowThePlanFails) {
  plan_file p = laguna_plan({1});
  for (const auto& g : p.ranks[0].groups)
    if (g.be == backend::flashinfer) {
      ASSERT_GE(g.buffers.size(), 3u);
      EXPECT_EQ(g.buffers.at(1).name, "int_workspace_buffer");
      EXPECT_EQ(g.buffers.at(1).bytes, 8 << 20);
      EXPECT_EQ(g.buffers.at(2).name, "page_locked_int_workspace_buffer");
      EXPECT_EQ(g.buffers.at(2).bytes, 8 << 20);
    }
  // FlashInfer group 0's buffer `name` cut to `bytes`.
  const auto cut = [&](const char* name, int64_t bytes) {
    plan_file q = p;
    for (auto& g : q.ranks[0].groups)
      if (g.be == backend::flashinfer && g.index == 0)
        for (auto& b : g.buffers)
          if (b.name == name) b = {name, "uint8", {bytes}, bytes};
    return q;
  };
  model_executor model;
  for (const char* name : {"int_workspace_buffer", "page_locked_int_workspace_buffer"}) {
    const report r = run_verify(cut(name, 16), model);
    ASSERT_FALSE(r.ok) << name;
    const violation& v = r.violations.at(0);
    EXPECT_EQ(v.buffer, name);
    EXPECT_EQ(v.capacity_bytes, 16);
    EXPECT_GE(v.required_bytes, 20);
    EXPECT_EQ(first_failure(r, backend::flashinfer, 0), 1) << name;
    EXPECT_EQ(first_failure(r, backend::flashinfer, 1), std::nullopt) << name;
  }
  // 2,048 bytes. On tensor cores (the mirror's default, use_tensor_cores 1 in the dump) a decode
  // batch of B one-row requests is B tiles of G_b = 6 packed rows (16-row tiles), unsplit past the
  // 2 x 132 / 8 = 33 work items of a kv head's budget, P = B: three index arrays of 4B bytes, each
  // from a multiple of 16, then o_indptr 4(B + 1) and the chunk size 4: 2,048 at B = 126, 2,052
  // at B = 127.
  plan_file tc = cut("int_workspace_buffer", 2048);
  const report r = run_verify(tc, model);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(first_failure(r, backend::flashinfer, 0), 127);
  EXPECT_EQ(r.violations.at(0).required_bytes, 2052);
  // The CUDA-core decode plan (use_tensor_cores 0): batches do not split (B x KV fills the grid),
  // P = B, and the parts end at 4B -> 16 | 4B -> 16 | 4(B + 1) + 4: 2,024 bytes at B = 168, 2,060
  // at B = 169.
  for (auto& g : tc.ranks[0].groups)
    if (g.be == backend::flashinfer) g.parameters.at("use_tensor_cores") = 0;
  const report cc = run_verify(tc, model);
  ASSERT_FALSE(cc.ok);
  EXPECT_EQ(first_failure(cc, backend::flashinfer, 0), 169);
  EXPECT_EQ(cc.violations.at(0).required_bytes, 2060);
}

// The smallest failing value of a class threshold, or nullopt.
std::optional<int64_t> class_failure(const report& r, bug_class cls, const std::string& variable) {
  for (const auto& t : r.thresholds)
    if (t.cls == cls && t.variable == variable) return t.min_failing;
  return std::nullopt;
}

// A block table of its own shape (an engine's dump): Laguna's planned table is [256, 256] (4096
// tokens in blocks of 16). Cut to 16 blocks a row, a scheduled step whose last request has 257
// tokens (17 blocks) reads past the table; cut to 100 rows, decode batch 97 replays the graph of
// 104 requests (vLLM's capture sizes 1, 2, 4, then multiples of 8), one row past 96's.
TEST(Plan, BlockTableNarrowerOrShorterThanTheEngineNeedsFails) {
  const plan_file p = laguna_plan({1});
  const auto cut = [&](int64_t rows, int64_t width) {
    plan_file q = p;
    for (auto& g : q.ranks[0].groups)
      for (auto& b : g.buffers)
        if (b.name == "block_table" && g.be == backend::triton && g.index == 0) {
          EXPECT_EQ(b.shape, (std::vector<int64_t>{256, 256}));
          b = {"block_table", "int32", {rows, width}, rows * width * 4};
        }
    return q;
  };
  model_executor model;
  const report narrow = run_verify(cut(256, 16), model);
  ASSERT_FALSE(narrow.ok);
  EXPECT_EQ(narrow.violations.at(0).buffer, "block_table");
  EXPECT_EQ(narrow.violations.at(0).required_bytes, 17 * 4);  // a row's 17 entries against 16
  EXPECT_EQ(class_failure(narrow, bug_class::c4, "seq_len"), 257);
  // Its case replays: the step with a 257-token request in the last row fails again.
  const report again = run_case(case_of(narrow.violations.at(0)), model);
  ASSERT_FALSE(again.ok);
  EXPECT_EQ(again.violations.at(0).buffer, "block_table");
  const report short_rows = run_verify(cut(100, 256), model);
  ASSERT_FALSE(short_rows.ok);
  EXPECT_EQ(class_failure(short_rows, bug_class::c4, "decode_batch"), 97);
  EXPECT_EQ(class_failure(short_rows, bug_class::c4, "seq_len"), std::nullopt);
}

// The message of reading `j` after `edit`, or "" when it reads.
template <class Edit>
std::string error_of(Edit edit) {
  json j = to_json(laguna_plan({1}));
  edit(j);
  try {
    plan_from_json(j, "p.json");
  } catch (const input_error& e) {
    return e.what();
  }
  return "";
}

TEST(Plan, MalformedPlansNameTheField) {
  auto g0 = [](json& j) -> json& { return j["ranks"][0]["groups"][0]; };
  EXPECT_EQ(error_of([](json&) {}), "");
  EXPECT_NE(error_of([](json& j) { j["headroom_plan"] = 2; }).find("'headroom_plan' = 2"), std::string::npos);
  EXPECT_NE(error_of([&](json& j) {
              g0(j)["buffers"][0]["bytes"] = 7;
            }).find("'ranks[0].groups[0].buffers[0].bytes' = 7: disagrees"),
            std::string::npos);
  EXPECT_NE(error_of([&](json& j) { g0(j)["buffers"][2]["shape"][1] = -3; }).find("shape[1]' = -3"),
            std::string::npos);
  EXPECT_NE(error_of([&](json& j) { g0(j)["buffers"][0]["dtype"] = "float8"; }).find("dtype' = \"float8\""),
            std::string::npos);
  EXPECT_NE(error_of([&](json& j) {
              g0(j)["layers"][0] = "model.layers.40.self_attn.attn";
            }).find("no attention layer"),
            std::string::npos);
  EXPECT_NE(error_of([&](json& j) {
              g0(j)["parameters"]["num_par_softmax_segments"] = 8;
            }).find("num_par_softmax_segments' = 8"),
            std::string::npos);
  EXPECT_NE(error_of([&](json& j) { j["ranks"][0]["groups"][1]["group"] = 0; }).find("given twice"),
            std::string::npos);
  EXPECT_NE(error_of([](json& j) {
              j["ranks"][0]["layers"][0]["num_kv_heads"] = 4;
            }).find("the model gives 8 at tp 1"),
            std::string::npos);
  EXPECT_NE(error_of([](json& j) { j["ranks"][0]["tp"] = 3; }).find("tp 3"), std::string::npos);
  EXPECT_NE(error_of([](json& j) { j["engine"]["max_num_seqs"] = 5000; }).find("max_num_seqs' = 5000"),
            std::string::npos);
  EXPECT_NE(
      error_of([&](json& j) { g0(j)["kv_cache_group"] = 99; }).find("kv_cache_group' = 99: this rank has"),
      std::string::npos);
  EXPECT_NE(error_of([&](json& j) { g0(j)["kv_cache_group"] = 1; }).find("not in KV-cache group 1"),
            std::string::npos);
  EXPECT_NE(
      error_of([](json& j) { j["kv_cache"]["layout"] = "interleaved"; }).find("layout' = \"interleaved\""),
      std::string::npos);
}

}  // namespace
}  // namespace headroom
