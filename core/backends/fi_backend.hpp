// FlashInfer's backend="auto" (--flashinfer-prefill auto; docs/engines.md §7, "On Hopper"): which
// of its two prefill backends a wrapper made with backend="auto" plans with, fa2 (PrefillPlan) or
// fa3 (PrefillSM90Plan), as flashinfer/utils.py determine_attention_backend decides it at fb28d72
// (is_sm90a_supported, is_fa3_backend_supported, is_fa3_prefill_head_dim_supported) and as the two
// wrappers vLLM makes call it: the paged prefill wrapper's plan (prefill.py,
// BatchPrefillWithPagedKVCacheWrapper.plan) and the tensor-core decode wrapper's (decode.py,
// BatchDecodeWithPagedKVCacheWrapper._plan_impl). Both resolve once, at their first plan, for the
// builder's head dim and dtypes: so per attention group here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/backends/flashinfer.hpp"

namespace headroom {

// The element types determine_attention_backend tells apart: fp8 (either format) and NVFP4 (a
// packed uint8 cache) beside the model dtypes, which it treats alike. The command line reaches the
// model dtypes and fp8 caches (--kv-cache-dtype fp8, fp8_e4m3, fp8_e5m2); NVFP4 is here for the
// conditions.
enum class fi_dtype { bf16, fp16, fp32, fp8_e4m3, fp8_e5m2, nvfp4 };
fi_dtype fi_dtype_of(dtype d);
fi_dtype fi_dtype_of(dtype d, kv_quant q);  // the cache's: q's fp8 format, else d
const char* to_string(fi_dtype d);

// determine_attention_backend's arguments.
struct fi_backend_args {
  int64_t compute_major = 9;  // the device's (get_compute_capability)
  // is_sm90a_supported also asks torch.version.cuda >= 12.3. The mirror has no CUDA version: vLLM
  // 8e958902 builds with CUDA 13.0.3 (docker/Dockerfile) and torch 2.13.0, so true by default.
  bool cuda_12_3 = true;
  bool pos_encoding = false;       // a pos_encoding_mode other than NONE (RoPE in the kernel)
  bool fp16_qk_reduction = false;  // use_fp16_qk_reductions
  bool custom_mask = false;        // use_custom_mask
  fi_dtype q = fi_dtype::bf16, kv = fi_dtype::bf16;
  // The QK and VO head dims, where the caller passes them (both wrappers' plan() do).
  std::optional<int64_t> head_dim_qk, head_dim_vo;
};

struct fi_backend_choice {
  bool fa3 = false;    // "fa3" (PrefillSM90Plan), else "fa2" (PrefillPlan)
  std::string reason;  // one short clause: the condition that decided
  bool operator==(const fi_backend_choice&) const = default;
};

// determine_attention_backend: fa3 on an sm90 device (CUDA 12.3 on) when the FA3 backend supports
// the arguments and, given head dims, FA3 prefill has them; else fa2.
fi_backend_choice determine_attention_backend(const fi_backend_args& a);

// The two wrappers vLLM makes with backend="auto". The prefill wrapper asks
// determine_attention_backend; the tensor-core decode wrapper takes fa2 unless q or the cache is
// fp8, and only then asks it (FlashInfer PR 2530, in v0.6.16.post3, vLLM 8e958902's pin).
enum class fi_wrapper { prefill, tensor_core_decode };
fi_backend_choice resolve_auto_backend(fi_wrapper w, const fi_backend_args& a);

// The backends of a FlashInfer builder's two wrappers.
struct fi_wrapper_backends {
  fi_backend_choice prefill, decode;  // decode: the tensor-core decode wrapper's
  bool operator==(const fi_wrapper_backends&) const = default;
};

// The query dtype vLLM's builder plans each wrapper with (FlashInferMetadataBuilder.get_q_data_type
// at 8e958902, disable_flashinfer_q_quantization left unset): the model's dtype without an fp8
// cache; with one, the cache's fp8 format for prefill on compute capability 9.0 or the 10.x family,
// and for decode on the 10.x family, and on 9.0 only when use_trtllm_attention is False
// (`trtllm_off`; unset or True, decode keeps the model's dtype, which XQA decode needs); elsewhere
// the model's dtype.
fi_dtype fi_q_dtype(fi_wrapper w, dtype model, kv_quant cache, int64_t compute_major,
                    bool trtllm_off = false);

// Both wrappers' backends for a builder of head size `head_dim` whose outputs are `d` (the model's
// dtype) and whose cache is `d` or the fp8 format `cache`, under o: with o.prefill_auto resolved as
// vLLM's builder calls the wrappers (FlashInferMetadataBuilder.build at 8e958902: pos_encoding_mode
// "NONE", no custom mask, use_fp16_qk_reduction left False, head_dim_qk only, so head_dim_vo =
// head_dim_qk; q as fi_q_dtype with o.trtllm_attention_off) on o.device; else o.prefill_sm90 names the
// backend of both (fa3 or fa2, as --flashinfer-prefill says).
fi_wrapper_backends fi_wrapper_backends_of(const flashinfer_options& o, dtype d, int64_t head_dim,
                                           kv_quant cache = kv_quant::none);

}  // namespace headroom
