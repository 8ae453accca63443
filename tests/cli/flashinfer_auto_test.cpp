// --flashinfer-prefill auto: FlashInfer's backend="auto" resolved per FlashInfer group and wrapper
// (core/backends/fi_backend.hpp), then on the command line: plan says what it chose and why, check
// and verify plan each wrapper with its backend, and a target that runs FA2 bodies refuses auto
// where it resolves to fa3 (exit 2, one line naming the flag and auto).
//
// Every expectation is worked by hand from FlashInfer's own conditions at fb28d72, cited beside it:
// flashinfer/utils.py determine_attention_backend, is_sm90a_supported, is_fa3_backend_supported,
// is_fa3_prefill_head_dim_supported; flashinfer/decode.py BatchDecodeWithPagedKVCacheWrapper._plan_impl
// for the tensor-core decode wrapper. vLLM 8e958902's builder passes pos_encoding_mode "NONE", no
// custom mask, no fp16 qk reduction and head_dim_qk only (so head_dim_vo = head_dim_qk).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/backends/fi_backend.hpp"
#include "tests/cli/cli_run.hpp"

namespace {

using namespace headroom_test;
using headroom::fi_backend_args;
using headroom::fi_dtype;
using headroom::fi_wrapper;
using nlohmann::json;

fi_backend_args h100(int64_t head_dim) {  // sm90, CUDA >= 12.3, bf16, vLLM's arguments
  fi_backend_args a;
  a.head_dim_qk = a.head_dim_vo = head_dim;
  return a;
}

bool prefill_fa3(const fi_backend_args& a) { return resolve_auto_backend(fi_wrapper::prefill, a).fa3; }
bool decode_fa3(const fi_backend_args& a) {
  return resolve_auto_backend(fi_wrapper::tensor_core_decode, a).fa3;
}

// is_sm90a_supported: compute capability major 9 and torch.version.cuda >= 12.3.
TEST(FlashInferAuto, Fa3OnlyOnSm90WithCuda123) {
  EXPECT_TRUE(prefill_fa3(h100(128)));  // H100 / H200, bf16, head dim 128: fa3
  fi_backend_args a = h100(128);
  a.compute_major = 8;  // A100: fa2
  EXPECT_FALSE(prefill_fa3(a));
  EXPECT_EQ(determine_attention_backend(a).reason, "compute capability 8.x, not sm90");
  a.compute_major = 10;  // B200: not 9 either
  EXPECT_FALSE(prefill_fa3(a));
  a = h100(128);
  a.cuda_12_3 = false;
  EXPECT_FALSE(prefill_fa3(a));
}

// is_fa3_prefill_head_dim_supported: equal QK / VO dims of 64, 128 or 256, or QK 192 with VO 128.
TEST(FlashInferAuto, HeadDimsFa3PrefillDoesNotHaveAreFa2) {
  for (int64_t d : {64, 128, 256}) EXPECT_TRUE(prefill_fa3(h100(d))) << d;
  for (int64_t d : {32, 80, 96, 192, 512}) EXPECT_FALSE(prefill_fa3(h100(d))) << d;
  fi_backend_args a = h100(192);
  a.head_dim_vo = 128;  // DeepSeek's MLA prefill shape
  EXPECT_TRUE(prefill_fa3(a));
  a.head_dim_qk = 128, a.head_dim_vo = 192;  // only that order
  EXPECT_FALSE(prefill_fa3(a));
  a.head_dim_qk = a.head_dim_vo = std::nullopt;  // a caller that gives no head dims: not asked
  EXPECT_TRUE(prefill_fa3(a));
  EXPECT_EQ(determine_attention_backend(h100(96)).reason, "head dim 96: not an FA3 prefill head dim");
}

// is_fa3_backend_supported: an fp8 cache needs fp8 q; an NVFP4 (uint8) cache never; other dtypes
// are not looked at (fp32 passes, an fp8 q over a bf16 cache passes).
TEST(FlashInferAuto, Fp8CacheNeedsFp8Query) {
  fi_backend_args a = h100(128);
  a.kv = fi_dtype::fp8_e4m3;
  EXPECT_FALSE(prefill_fa3(a));  // bf16 q, fp8 kv: fa2
  EXPECT_EQ(determine_attention_backend(a).reason, "bf16 q, fp8 e4m3 kv: fp8 kv needs fp8 q");
  a.q = fi_dtype::fp8_e5m2;  // either fp8 format counts
  EXPECT_TRUE(prefill_fa3(a));
  a.kv = fi_dtype::bf16;
  EXPECT_TRUE(prefill_fa3(a));
  a.kv = fi_dtype::nvfp4;
  EXPECT_FALSE(prefill_fa3(a));
  a.q = a.kv = fi_dtype::fp32;
  EXPECT_TRUE(prefill_fa3(a));
}

// is_fa3_backend_supported: no custom mask, pos_encoding_mode NONE, no fp16 qk reduction (vLLM
// passes none of them, so these are FlashInfer's own conditions, reached by its other callers).
TEST(FlashInferAuto, MaskRopeAndFp16QkReductionAreFa2) {
  fi_backend_args a = h100(128);
  a.custom_mask = true;
  EXPECT_FALSE(prefill_fa3(a));
  a = h100(128);
  a.pos_encoding = true;
  EXPECT_FALSE(prefill_fa3(a));
  a = h100(128);
  a.fp16_qk_reduction = true;
  EXPECT_FALSE(prefill_fa3(a));
}

// decode.py _plan_impl (use_tensor_cores, backend "auto"): fa2 unless q or the cache is fp8, and
// only then determine_attention_backend, with the head dim for both QK and VO.
TEST(FlashInferAuto, TensorCoreDecodeIsFa2WithoutFp8) {
  EXPECT_FALSE(decode_fa3(h100(128)));  // the same sm90 / bf16 / 128 whose prefill is fa3
  EXPECT_EQ(resolve_auto_backend(fi_wrapper::tensor_core_decode, h100(128)).reason,
            "neither q nor kv is fp8");
  fi_backend_args a = h100(128);
  a.q = a.kv = fi_dtype::fp8_e4m3;
  EXPECT_TRUE(decode_fa3(a));
  a.q = fi_dtype::bf16;  // asked, and an fp8 cache under bf16 q is fa2 there
  EXPECT_FALSE(decode_fa3(a));
  a = h100(96);
  a.q = a.kv = fi_dtype::fp8_e4m3;
  EXPECT_FALSE(decode_fa3(a));
}

// The mirror's wrappers: auto resolves on the case's device and dtype; fa2 / fa3 name both.
TEST(FlashInferAuto, WrapperBackendsOfTheOptions) {
  headroom::flashinfer_options o;
  o.prefill_auto = true;
  auto wb = fi_wrapper_backends_of(o, headroom::dtype::bf16, 128);
  EXPECT_TRUE(wb.prefill.fa3);
  EXPECT_EQ(wb.prefill.reason, "sm90, bf16 q and kv, head dim 128");
  EXPECT_FALSE(wb.decode.fa3);
  o.device.compute_major = 8;
  EXPECT_FALSE(fi_wrapper_backends_of(o, headroom::dtype::bf16, 128).prefill.fa3);
  o.prefill_auto = false;
  o.prefill_sm90 = true;  // fa3 is both wrappers', whatever the device
  wb = fi_wrapper_backends_of(o, headroom::dtype::bf16, 96);
  EXPECT_TRUE(wb.prefill.fa3 && wb.decode.fa3);
}

// One layer of `heads` query heads (by default 1024: flashinfer_prefill_test.cpp's wide.json), 8 kv
// heads of `head_dim`.
std::string wide_config(const fs::path& dir, int head_dim, int heads = 1024) {
  return llama_config(dir, "wide" + std::to_string(head_dim) + "x" + std::to_string(heads) + ".json", heads,
                      8, head_dim);
}

const std::string flags = " --backend flashinfer --tp 1 --max-num-batched-tokens 2048 --max-num-seqs ";

// Head dim 128 on the default sm90 device, bf16: the prefill wrapper is fa3, the tensor-core decode
// wrapper fa2. With fa3 on both, 293 one-row decode requests overflow PrefillSM90Plan's 8 MiB int
// workspace (flashinfer_prefill_test.cpp works the bytes out); under auto the decode requests go to
// PrefillPlan, so only check's widest prefill step overflows it (8,917,536 bytes at 300 requests:
// flashinfer_prefill_test.cpp), and plan carries the prefill fields only.
TEST(FlashInferAuto, PlanSaysWhatAutoChoseAndCheckPlansEachWrapperSo) {
  const auto dir = scratch("fi_auto_plan");
  const std::string config = wide_config(dir, 128);
  const auto fa3 = run_cli("check " + config + flags + "300 --flashinfer-prefill fa3");
  EXPECT_EQ(fa3.code, 1);
  EXPECT_NE(fa3.out.find("required 8401440 B"), std::string::npos) << fa3.out;  // decode batch 293 first
  const auto checked = run_cli("check " + config + flags + "300 --flashinfer-prefill auto");
  EXPECT_EQ(checked.code, 1) << checked.out << checked.err;
  EXPECT_EQ(checked.out.find("required 8401440 B"), std::string::npos) << checked.out;
  EXPECT_NE(checked.out.find("required 8917536 B"), std::string::npos) << checked.out;

  const std::string out = (dir / "p.json").string();
  const auto r = run_cli("plan " + config + flags + "293 --flashinfer-prefill auto --json " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(
      r.out.find("note: flashinfer tp 1 group 0: --flashinfer-prefill auto chose fa3 for prefill (sm90, "
                 "bf16 q and kv, head dim 128), fa2 for tensor-core decode (neither q nor kv is fp8)"),
      std::string::npos)
      << r.out;
  const json p = json::parse(slurp(out));
  const json& q = p["ranks"][0]["groups"][0]["parameters"];
  EXPECT_EQ(q["fa3_prefill"], 1);
  EXPECT_EQ(q["fa3_decode"], 0);
  EXPECT_EQ(q.value("sm90_prefill_int_workspace_bytes", json()), 8716832);
  EXPECT_FALSE(q.contains("sm90_decode_total_works"));
  // verify plans each wrapper as its parameter says, and runs check's steps: the widest prefill
  // step overflows (plan's 8,716,832 bytes); decode as fa3 overflows at 293 requests too, and is
  // the int_workspace finding reported first.
  const auto verified = run_cli("verify " + out);
  EXPECT_EQ(verified.code, 1);
  EXPECT_NE(verified.out.find("required 8716832 B"), std::string::npos) << verified.out;
  EXPECT_EQ(verified.out.find("required 8401440 B"), std::string::npos) << verified.out;
  json fa3_decode = p;
  fa3_decode["ranks"][0]["groups"][0]["parameters"]["fa3_decode"] = 1;
  const auto edited = dir / "fa3_decode.json";
  std::ofstream(edited) << fa3_decode.dump();
  const auto both = run_cli("verify " + edited.string());
  EXPECT_EQ(both.code, 1);
  EXPECT_NE(both.out.find("required 8401440 B"), std::string::npos) << both.out;
  // The engine-args key is the flag's.
  const auto args = dir / "args.json";
  std::ofstream(args) << R"({"flashinfer_prefill": "auto"})";
  EXPECT_NE(run_cli("plan " + config + flags + "8 --engine-args " + args.string()).out.find("auto chose fa3"),
            std::string::npos);
}

// Where auto resolves to fa3 a target that runs FA2 bodies refuses it; where it resolves to fa2
// (head dim 96: not an FA3 prefill head dim) they run it (16 query heads: the simulator's run of
// 1024 takes 20 s, and the choice depends on the head dim alone).
TEST(FlashInferAuto, FA2TargetsRefuseAutoOnlyWhereItResolvesToFa3) {
  const auto dir = scratch("fi_auto_targets");
  const std::string d128 = wide_config(dir, 128), d96 = wide_config(dir, 96, 16);
  EXPECT_EQ(bad_input_problem(run_cli("check " + d128 + flags + "8 --target sim --flashinfer-prefill auto"),
                              {"'--flashinfer-prefill' = auto", "resolves to fa3 at tp 1 group 0 prefill",
                               "head dim 128", "--target model only"}),
            "");
  EXPECT_EQ(bad_input_problem(run_cli("fuzz --target sim --cases 1 --flashinfer-prefill auto"),
                              {"'--flashinfer-prefill' = auto", "--target model only"}),
            "");
  const auto sim = run_cli("check " + d96 + flags + "8 --target sim --flashinfer-prefill auto");
  EXPECT_EQ(sim.code, 0) << sim.out << sim.err;
  const auto plan = run_cli("plan " + d96 + flags + "8 --flashinfer-prefill auto");
  EXPECT_NE(plan.out.find("chose fa2 for prefill (head dim 96: not an FA3 prefill head dim)"),
            std::string::npos)
      << plan.out;
  // A case file replays auto as it was written: on the model target only where it resolves to fa3.
  const std::string report = (dir / "r.json").string();
  ASSERT_EQ(run_cli("check " + d128 + flags + "300 --flashinfer-prefill fa3 --json " + report).code, 1);
  json r = json::parse(slurp(report));
  for (auto& v : r["violations"]) v["case"]["flashinfer"]["prefill_auto"] = true;
  std::ofstream(report) << r.dump();
  EXPECT_EQ(bad_input_problem(run_cli("replay " + report + " --violation 0 --target sim"),
                              {"'flashinfer.prefill_auto' = auto", "--target model only"}),
            "");
  EXPECT_EQ(run_cli("replay " + report + " --violation 0").code, 0);  // decode on fa2: clean
}

}  // namespace
