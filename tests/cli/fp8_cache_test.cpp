// fp8 KV caches (--kv-cache-dtype fp8, fp8_e4m3, fp8_e5m2): the rules each size follows, then the
// command line. Every expectation is worked by hand from the upstream source cited beside it:
// vLLM 8e958902 (vllm/v1/kv_cache_interface.py FullAttentionSpec.real_page_size_bytes,
// vllm/utils/torch_utils.py STR_DTYPE_TO_TORCH_DTYPE, vllm/v1/attention/backends/flashinfer.py
// FlashInferMetadataBuilder.get_q_data_type, flash_attn.py _get_scheduler_metadata), FlashInfer
// fb28d72 (flashinfer/utils.py determine_attention_backend, decode.py _plan_impl) and
// vllm-project/flash-attention 617264c (hopper/tile_size.h tile_size_fwd_sm90's FP8 branch,
// hopper/flash_api.cpp get_num_splits, hopper/heuristics.h num_splits_heuristic).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/backends/fa3.hpp"
#include "core/backends/fi_backend.hpp"
#include "core/backends/triton.hpp"
#include "core/check/plans.hpp"
#include "core/model/loader.hpp"
#include "core/engine/engine.hpp"
#include "tests/cli/cli_run.hpp"

namespace {

using namespace headroom_test;
using headroom::dtype;
using headroom::fi_dtype;
using headroom::fi_wrapper;
using headroom::kv_quant;
using nlohmann::json;

// page_size_bytes = block_size x num_kv_heads x (head_size + head_size_v) x get_dtype_size(dtype),
// and an fp8 cache's spec dtype is torch.uint8 (1 byte).
TEST(Fp8Cache, PageBytesHalveUnderAnFp8Cache) {
  headroom::kv_spec s;
  s.num_kv_heads = 8, s.head_size = s.head_size_v = 128, s.block_size = 16, s.kv_dtype = dtype::bf16;
  EXPECT_EQ(page_size_bytes(s), 65536);  // 16 x 8 x (128 + 128) x 2
  s.quant = kv_quant::fp8_e4m3;
  EXPECT_EQ(page_size_bytes(s), 32768);  // 16 x 8 x 256 x 1
  s.kv_dtype = dtype::fp32;              // the model's dtype does not reach an fp8 cache
  EXPECT_EQ(page_size_bytes(s), 32768);
  s.quant = kv_quant::none;
  EXPECT_EQ(page_size_bytes(s), 131072);  // 16 x 8 x 256 x 4
  s.num_kv_heads = 4, s.head_size = 192, s.head_size_v = 128, s.block_size = 32;
  s.quant = kv_quant::fp8_e5m2;
  EXPECT_EQ(page_size_bytes(s), 40960);  // 32 x 4 x (192 + 128) x 1
}

// get_q_data_type: with an fp8 cache q is fp8 for prefill on 9.0 and the 10.x family, for decode
// on 10.x, and on 9.0 only with use_trtllm_attention False; otherwise the model's dtype.
TEST(Fp8Cache, QueryDtypeOfEachWrapper) {
  using headroom::fi_q_dtype;
  EXPECT_EQ(fi_q_dtype(fi_wrapper::prefill, dtype::bf16, kv_quant::fp8_e4m3, 9), fi_dtype::fp8_e4m3);
  EXPECT_EQ(fi_q_dtype(fi_wrapper::tensor_core_decode, dtype::bf16, kv_quant::fp8_e4m3, 9), fi_dtype::bf16);
  EXPECT_EQ(fi_q_dtype(fi_wrapper::tensor_core_decode, dtype::bf16, kv_quant::fp8_e4m3, 9, true),
            fi_dtype::fp8_e4m3);
  EXPECT_EQ(fi_q_dtype(fi_wrapper::tensor_core_decode, dtype::fp16, kv_quant::fp8_e5m2, 10),
            fi_dtype::fp8_e5m2);
  EXPECT_EQ(fi_q_dtype(fi_wrapper::prefill, dtype::fp16, kv_quant::fp8_e4m3, 8), fi_dtype::fp16);  // fa2 only
  EXPECT_EQ(fi_q_dtype(fi_wrapper::prefill, dtype::fp16, kv_quant::none, 9), fi_dtype::fp16);
}

// backend="auto" under an fp8 cache, head dim 128: on sm90 prefill has fp8 q and kv, so fa3; the
// tensor-core decode wrapper is asked (its cache is fp8) with bf16 q, so fa2 ("fp8 kv needs fp8
// q"), and with fp8 q (use_trtllm_attention False) fa3. On sm80 both are fa2.
TEST(Fp8Cache, AutoResolvesFa3ForPrefillAndForDecodeWithFp8Query) {
  headroom::flashinfer_options o;
  o.prefill_auto = true;
  auto wb = fi_wrapper_backends_of(o, dtype::bf16, 128, kv_quant::fp8_e4m3);
  EXPECT_TRUE(wb.prefill.fa3);
  EXPECT_EQ(wb.prefill.reason, "sm90, fp8 e4m3 q and kv, head dim 128");
  EXPECT_FALSE(wb.decode.fa3);
  EXPECT_EQ(wb.decode.reason, "bf16 q, fp8 e4m3 kv: fp8 kv needs fp8 q");
  o.trtllm_attention_off = true;
  wb = fi_wrapper_backends_of(o, dtype::bf16, 128, kv_quant::fp8_e4m3);
  EXPECT_TRUE(wb.prefill.fa3 && wb.decode.fa3);
  EXPECT_EQ(wb.decode.reason, "sm90, fp8 e4m3 q and kv, head dim 128");
  o.device.compute_major = 8;
  wb = fi_wrapper_backends_of(o, dtype::bf16, 128, kv_quant::fp8_e4m3);
  EXPECT_FALSE(wb.prefill.fa3 || wb.decode.fa3);
  EXPECT_EQ(wb.prefill.reason, "compute capability 8.x, not sm90");
}

// tile_size_fwd_sm90 with element_size 1 (two-level accumulation on): one-MMA-warpgroup tiles
// 64 x 128 (head dim <= 96) or 64 x 96, prefill tiles 192 x 128 / 128 x 128 / 128 x 192 / 128 x 96 /
// 128 x (local ? 64 : 128), whatever causal and paged-KV TMA; Dao-AILab's at 0251105 differs.
TEST(Fp8Cache, Fa3E4m3Tiles) {
  auto tile = [](int64_t d, bool causal, bool local, bool non_tma, bool one_wg, bool e4m3) {
    const headroom::fa3_tile t = headroom::fa3_tile_size(d, causal, local, non_tma, one_wg, e4m3);
    return std::pair<int64_t, int64_t>{t.m, t.n};
  };
  using p = std::pair<int64_t, int64_t>;
  EXPECT_EQ(tile(128, true, false, true, false, false), p(128, 128));  // 16-bit, causal
  EXPECT_EQ(tile(128, true, false, true, false, true), p(128, 192));
  EXPECT_EQ(tile(128, true, false, true, true, true), p(64, 96));
  EXPECT_EQ(tile(64, false, false, false, true, true), p(64, 128));
  EXPECT_EQ(tile(64, true, false, false, false, true), p(192, 128));
  EXPECT_EQ(tile(96, true, false, false, false, true), p(128, 128));
  EXPECT_EQ(tile(192, true, false, true, false, true), p(128, 96));
  EXPECT_EQ(tile(256, true, true, true, false, true), p(128, 64));
  EXPECT_EQ(tile(256, true, false, true, false, true), p(128, 128));
  const headroom::fa3_tile up = headroom::fa3_upstream_tile_size(128, true, false, true, true);
  EXPECT_EQ(p(up.m, up.n), p(128, 160));
  const headroom::fa3_tile up_tma = headroom::fa3_upstream_tile_size(128, true, false, false, true);
  EXPECT_EQ(p(up_tma.m, up_tma.n), p(128, 224));
}

// A decode call (32 q heads over 8 kv heads, head size 128, block 16, one query row, 4,096 keys):
// packed query 4 rows, causal (64 < d <= 128), one MMA warpgroup; blocks of 16 keep paged KV off
// TMA. 16-bit: tile 64 x 128, 32 n-blocks, 8 m-blocks in all (< 0.8 x 132), splits up to 32; the
// best wave efficiency is 128 / 132 (16 or 32 splits), 85% of it 0.824, first reached at 14
// splits (112 / 132 = 0.848; 13: 0.788). e4m3: tile 64 x 96, ceil(4096 / 96) = 43 n-blocks, best
// 1.0 (33 splits, 264 / 132 = 2 waves), 85% first reached at 15 (120 / 132 = 0.909; 14: 0.848).
TEST(Fp8Cache, Fa3SplitHeuristicSeesE4m3Tiles) {
  headroom::fa3_call c{32, 8, 128, 16, 0, 1, 4096};
  EXPECT_EQ(headroom::fa3_heuristic_splits(c), 14);
  c.e4m3 = true;
  EXPECT_EQ(headroom::fa3_heuristic_splits(c), 15);
  const headroom::fa3_tile t = headroom::fa3_call_tile(c);
  EXPECT_EQ(t.m, 64);
  EXPECT_EQ(t.n, 96);
}

// _get_tile_size: TILE_SIZE_DECODE 16 for q of 2 bytes, 32 for q quantised to fp8 (an fp8 cache on
// CUDA), and the 3D decode's segment s of a sequence of L keys runs iff s x ceil(L / (16 x TILE)) x
// TILE < L. One request of 256 keys, 4 query heads of 128 (padded 128) over 1 kv head: tile 16,
// every segment runs (15 x 16 < 256), the last row (3 x 16 + 15) = 63 ends segm_output at 63 x 128
// + 128 = 8,192; tile 32, segments 0..7 (7 x 32 < 256 <= 8 x 32), row 3 x 16 + 7 = 55, 55 x 128 +
// 128 = 7,168. check plans Triton's decode with the cache's tile.
TEST(Fp8Cache, TritonDecodeTileIs32UnderAnFp8Cache) {
  headroom::triton_plan p = headroom::plan_triton(4, 1, 128, headroom::triton_options{});
  headroom::rank_layer l;
  l.num_heads = 4, l.num_kv_heads = 1, l.head_size = l.head_size_v = 128;
  const headroom::batch b{{256}, {1}};
  EXPECT_EQ(headroom::triton_needs(p, l, b)[0].elems, 8192);
  EXPECT_EQ(headroom::triton_needs(p, l, b)[1].elems, 64);
  p.decode_tile = headroom::triton_decode_tile(kv_quant::fp8_e4m3);
  EXPECT_EQ(headroom::triton_needs(p, l, b)[0].elems, 7168);
  EXPECT_EQ(headroom::triton_needs(p, l, b)[1].elems, 56);

  headroom::model_geometry m = headroom::load_model(source_path("configs/llama-3-8b.json"));
  m.kv_cache = kv_quant::fp8_e4m3;
  const headroom::check_case c = headroom::make_case(
      m, 1, headroom::backend::triton, headroom::policy::per_layer, headroom::grouping::heads, true, 16, 0);
  const headroom::engine e = headroom::make_engine(c);
  const auto parts = headroom::plan_parts(c, e.rg, e.groups.at(0), e.rg.model_wide_heads, b);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(std::get<headroom::triton_plan>(parts[0].plan).decode_tile, 32);
}

const std::string llama = " " + source_path("configs/llama-3-8b.json") + " --tp 1";

// plan: the KV cache groups' page bytes (8 kv heads of 128, blocks of 16: 16 x 8 x 256 x 1 =
// 32,768, bf16 65,536) and what auto chose for each wrapper, with --use-trtllm-attention false too.
TEST(Fp8Cache, PlanShowsPageBytesAndAutosChoices) {
  const auto dir = scratch("fp8_plan");
  const std::string auto_fi = " --backend flashinfer --flashinfer-prefill auto --kv-cache-dtype fp8";
  const auto r = run_cli("plan" + llama + auto_fi);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("note: kv cache tp 1 group 0: fp8_e4m3 (1 byte an element; queries and outputs "
                       "bfloat16), page_size_bytes 32768 (bfloat16 cache: 65536)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("chose fa3 for prefill (sm90, fp8 e4m3 q and kv, head dim 128), fa2 for tensor-core "
                       "decode (bf16 q, fp8 e4m3 kv: fp8 kv needs fp8 q)"),
            std::string::npos)
      << r.out;
  const std::string out = (dir / "p.json").string();
  const auto off = run_cli("plan" + llama + auto_fi + " --use-trtllm-attention false --json " + out);
  ASSERT_EQ(off.code, 0) << off.err;
  EXPECT_NE(off.out.find("fa3 for tensor-core decode (sm90, fp8 e4m3 q and kv, head dim 128)"),
            std::string::npos)
      << off.out;
  const json p = json::parse(slurp(out));
  EXPECT_EQ(p["ranks"][0]["groups"][0]["parameters"]["fa3_decode"], 1);
  EXPECT_EQ(p["model"]["kv_cache_dtype"], "fp8_e4m3");
  EXPECT_EQ(run_cli("check" + llama + auto_fi + " --use-trtllm-attention false").code, 0);
}

// Targets that run kernel bodies refuse an fp8 cache; FA3 refuses fp8_e5m2; vLLM's other
// quantised caches are not modelled: exit 2, one line naming the flag and the value as given.
TEST(Fp8Cache, RefusedWhereNotModelled) {
  EXPECT_EQ(bad_input_problem(run_cli("check" + llama + " --kv-cache-dtype fp8 --target sim"),
                              {"'--kv-cache-dtype' = fp8", "--target model only", "sim target"}),
            "");
  EXPECT_EQ(bad_input_problem(run_cli("fuzz --target sim --cases 1 --kv-cache-dtype fp8_e4m3"),
                              {"'--kv-cache-dtype' = fp8_e4m3", "--target model only"}),
            "");
  EXPECT_EQ(bad_input_problem(run_cli("check" + llama + " --kv-cache-dtype fp8_e5m2 --backend fa3"),
                              {"'--kv-cache-dtype' = fp8_e5m2", "FLASH_ATTN"}),
            "");
  EXPECT_EQ(bad_input_problem(run_cli("check" + llama + " --kv-cache-dtype fp8_inc"),
                              {"'--kv-cache-dtype' = fp8_inc", "not modelled"}),
            "");
  EXPECT_EQ(
      bad_input_problem(run_cli("check" + llama + " --kv-cache-dtype fp8 --flashinfer-decode cuda-cores"),
                        {"'--flashinfer-decode' = cuda-cores", "fp8 KV cache"}),
      "");
  EXPECT_EQ(bad_input_problem(run_cli("check" + llama + " --kv-cache-dtype fp8_e5m2 --backend triton"),
                              {"'--kv-cache-dtype' = fp8_e5m2", "TRITON_ATTN", "Attention.forward"}),
            "");
  EXPECT_EQ(run_cli("check" + llama + " --kv-cache-dtype fp8_e5m2 --backend flashinfer").code, 0);
}

// A report's case keeps its fp8 cache: replay runs it on the model target, refuses it on sim.
TEST(Fp8Cache, ReplayKeepsTheCache) {
  const auto dir = scratch("fp8_replay");
  const std::string report = (dir / "r.json").string();
  ASSERT_EQ(run_cli("check" + llama +
                    " --backend fa3 --kv-cache-dtype fp8 --mutant fa3-metadata-old-layout "
                    "--json " +
                    report)
                .code,
            1);
  const json r = json::parse(slurp(report));  // the case's model is a models entry, by model_ref
  EXPECT_EQ(r["models"][r["violations"][0]["case"]["model_ref"].get<int>()]["kv_cache_dtype"], "fp8_e4m3");
  EXPECT_EQ(bad_input_problem(run_cli("replay " + report + " --violation 0 --target sim"),
                              {"'kv_cache_dtype' = fp8_e4m3", "--target model only"}),
            "");
  EXPECT_EQ(run_cli("replay " + report + " --violation 0").code, 1);
}

// A plan file keeps its fp8 cache too: verify runs it on the model target, refuses it on sim.
TEST(Fp8Cache, VerifyKeepsTheCache) {
  const auto dir = scratch("fp8_verify");
  const std::string plan = (dir / "p.json").string();
  ASSERT_EQ(run_cli("plan" + llama + " --backend flashinfer --kv-cache-dtype fp8 --json " + plan).code, 0);
  EXPECT_EQ(bad_input_problem(run_cli("verify " + plan + " --target sim"),
                              {"'model.kv_cache_dtype' = fp8_e4m3", "--target model only"}),
            "");
  EXPECT_EQ(run_cli("verify " + plan).code, 0);
}

}  // namespace
