// Peer tests: the rows of vLLM's test_cudagraph_sizes_post_init (vllm-project/vllm at 8e958902,
// tests/compile/test_config.py) that expect a ValidationError. headroom's library takes capture
// sizes as given (core/engine/settings.hpp); the headroom command refuses what vLLM refuses (exit 2,
// one line), so these run the command on the bundled Laguna XS.2 config with the rows' settings
// (max_num_seqs 128, max_num_batched_tokens 2048, FULL_AND_PIECEWISE, headroom's default mode).
// Also the cache dtypes vLLM's FLASH_ATTN refuses and accepts (test_attention_selector.py).
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/cli_run.hpp"

namespace {

using namespace headroom_test;

// `headroom plan` of Laguna XS.2 with `flags`: its exit code.
int plan_exit(const std::string& flags) {
  return run_cli("plan " + source_path("configs/laguna-xs2.json") + " " + flags).code;
}

int post_init_row_exit(const std::string& flags) {
  return plan_exit("--max-num-seqs 128 --max-num-batched-tokens 2048 " + flags);
}

// Row ([1, 2, 4], 8, 1, False, 2048, FULL_AND_PIECEWISE, ValidationError): a given maximum that
// is not the list's largest size is refused; row ([1, 2, 4], 4, ..., 4) is accepted.
TEST(VllmCaptureSizeErrors, InconsistentMaxIsRefused) {
  EXPECT_EQ(post_init_row_exit("--cudagraph-capture-sizes 1,2,4 --max-cudagraph-capture-size 8"), 2);
  EXPECT_EQ(post_init_row_exit("--cudagraph-capture-sizes 1,2,4 --max-cudagraph-capture-size 4"), 0);
}

// Row (None, 0, 1, False, 2048, FULL_AND_PIECEWISE, ValidationError): with graphs on, the largest
// capture size must be at least 1.
TEST(VllmCaptureSizeErrors, ZeroMaxWithGraphsIsRefused) {
  EXPECT_EQ(post_init_row_exit("--max-cudagraph-capture-size 0"), 2);
}

// tests/kernels/attention/test_attention_selector.py (vllm-project/vllm at 6adad087):
// FlashAttentionBackend.supports_kv_cache_dtype. headroom's --backend fa3 is vLLM's FLASH_ATTN on
// FA3 (Hopper), planned here on the same config with an fp8 cache.
int fa3_cache_exit(const std::string& cache) { return plan_exit("--backend fa3 --kv-cache-dtype " + cache); }

// test_flash_attn_rejects_unhandled_kv_cache_dtypes[fp8_e5m2]: FLASH_ATTN does not take an e5m2
// cache; the command refuses the pair (exit 2). The row's other dtypes (fp8_ds_mla, fp8_inc,
// nvfp4, *_per_token_head) are not modelled at all, so refused whatever the backend.
TEST(VllmFlashAttnCacheDtypes, E5m2IsRefused) {
  EXPECT_EQ(fa3_cache_exit("fp8_e5m2"), 2);
  EXPECT_EQ(fa3_cache_exit("fp8_per_token_head"), 2);
}

// test_flash_attn_accepts_handled_fp8_variants[fp8] and [fp8_e4m3]: both are accepted.
TEST(VllmFlashAttnCacheDtypes, Fp8AndE4m3AreAccepted) {
  EXPECT_EQ(fa3_cache_exit("fp8"), 0);
  EXPECT_EQ(fa3_cache_exit("fp8_e4m3"), 0);
}

}  // namespace
