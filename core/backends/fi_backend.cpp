// FlashInfer's backend="auto" (fi_backend.hpp): determine_attention_backend's conditions in its
// order at fb28d72, each fa2 answer naming the first condition that failed.
#include "core/backends/fi_backend.hpp"

#include "core/util/names.hpp"

namespace headroom {
namespace {

constexpr name_table<fi_dtype, 6> fi_dtype_names = {{{fi_dtype::bf16, "bf16"},
                                                     {fi_dtype::fp16, "fp16"},
                                                     {fi_dtype::fp32, "fp32"},
                                                     {fi_dtype::fp8_e4m3, "fp8 e4m3"},
                                                     {fi_dtype::fp8_e5m2, "fp8 e5m2"},
                                                     {fi_dtype::nvfp4, "nvfp4"}}};

bool is_fp8(fi_dtype d) { return d == fi_dtype::fp8_e4m3 || d == fi_dtype::fp8_e5m2; }

std::string dtypes_text(const fi_backend_args& a) {
  if (a.q == a.kv) return std::string(to_string(a.q)) + " q and kv";
  return std::string(to_string(a.q)) + " q, " + to_string(a.kv) + " kv";
}

// is_fa3_backend_supported: why FA3 cannot take the arguments (nullopt: it can).
std::optional<std::string> fa3_unsupported(const fi_backend_args& a) {
  if (a.custom_mask) return "a custom mask";
  if (a.pos_encoding) return "RoPE in the kernel (pos_encoding_mode not NONE)";
  if (a.fp16_qk_reduction) return "fp16 qk reduction";
  if (is_fp8(a.kv) && !is_fp8(a.q)) return dtypes_text(a) + ": fp8 kv needs fp8 q";
  if (a.kv == fi_dtype::nvfp4) return "an NVFP4 kv cache";
  return std::nullopt;
}

// is_fa3_prefill_head_dim_supported: equal dims of 64, 128 or 256, or QK 192 with VO 128.
bool fa3_prefill_head_dims(int64_t qk, int64_t vo) {
  if (qk == vo) return qk == 64 || qk == 128 || qk == 256;
  return qk == 192 && vo == 128;
}

std::string head_dims_text(int64_t qk, int64_t vo) {
  return qk == vo ? "head dim " + std::to_string(qk)
                  : "head dims " + std::to_string(qk) + " / " + std::to_string(vo);
}

}  // namespace

fi_dtype fi_dtype_of(dtype d) {
  switch (d) {
    case dtype::bf16:
      return fi_dtype::bf16;
    case dtype::fp16:
      return fi_dtype::fp16;
    case dtype::fp32:
      return fi_dtype::fp32;
  }
  return fi_dtype::bf16;
}

fi_dtype fi_dtype_of(dtype d, kv_quant q) {
  switch (q) {
    case kv_quant::fp8_e4m3:
      return fi_dtype::fp8_e4m3;
    case kv_quant::fp8_e5m2:
      return fi_dtype::fp8_e5m2;
    case kv_quant::none:
      break;
  }
  return fi_dtype_of(d);
}

const char* to_string(fi_dtype d) { return name_in(fi_dtype_names, d); }

fi_backend_choice determine_attention_backend(const fi_backend_args& a) {
  if (a.compute_major != 9)
    return {false, "compute capability " + std::to_string(a.compute_major) + ".x, not sm90"};
  if (!a.cuda_12_3) return {false, "CUDA before 12.3"};
  if (auto why = fa3_unsupported(a)) return {false, *why};
  if (!a.head_dim_qk || !a.head_dim_vo) return {true, "sm90, " + dtypes_text(a) + ", no head dims given"};
  const std::string dims = head_dims_text(*a.head_dim_qk, *a.head_dim_vo);
  if (!fa3_prefill_head_dims(*a.head_dim_qk, *a.head_dim_vo))
    return {false, dims + ": not an FA3 prefill head dim"};
  return {true, "sm90, " + dtypes_text(a) + ", " + dims};
}

fi_backend_choice resolve_auto_backend(fi_wrapper w, const fi_backend_args& a) {
  if (w == fi_wrapper::tensor_core_decode && !is_fp8(a.q) && !is_fp8(a.kv))
    return {false, "neither q nor kv is fp8"};
  return determine_attention_backend(a);
}

fi_dtype fi_q_dtype(fi_wrapper w, dtype model, kv_quant cache, int64_t compute_major, bool trtllm_off) {
  if (cache == kv_quant::none) return fi_dtype_of(model);
  const bool fp8_q = compute_major == 10 || (compute_major == 9 && (w == fi_wrapper::prefill || trtllm_off));
  return fp8_q ? fi_dtype_of(model, cache) : fi_dtype_of(model);
}

fi_wrapper_backends fi_wrapper_backends_of(const flashinfer_options& o, dtype d, int64_t head_dim,
                                           kv_quant cache) {
  if (!o.prefill_auto) {
    const fi_backend_choice named{o.prefill_sm90,
                                  o.prefill_sm90 ? "--flashinfer-prefill fa3" : "--flashinfer-prefill fa2"};
    return {named, named};
  }
  fi_backend_args a;
  a.compute_major = o.device.compute_major;
  a.kv = fi_dtype_of(d, cache);
  a.head_dim_qk = a.head_dim_vo = head_dim;
  a.q = fi_q_dtype(fi_wrapper::prefill, d, cache, a.compute_major);
  const fi_backend_choice prefill = resolve_auto_backend(fi_wrapper::prefill, a);
  a.q = fi_q_dtype(fi_wrapper::tensor_core_decode, d, cache, a.compute_major, o.trtllm_attention_off);
  return {prefill, resolve_auto_backend(fi_wrapper::tensor_core_decode, a)};
}

}  // namespace headroom
