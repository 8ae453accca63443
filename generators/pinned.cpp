// Pinned engine settings into cases, and the test that a case keeps them (pinned.hpp).
#include "generators/pinned.hpp"

#include <algorithm>

namespace headroom::generators {
namespace {

template <class T>
void pin_one(const std::optional<T>& given, T& field) {
  if (given) field = *given;
}

}  // namespace

void pin(const pinned_settings& p, engine_settings& e) {
  pin_one(p.max_num_seqs, e.max_num_seqs);
  pin_one(p.max_model_len, e.max_model_len);
  pin_one(p.max_num_batched_tokens, e.max_num_batched_tokens);
  if (!p.max_num_seqs && e.max_num_seqs > e.max_num_batched_tokens)  // vLLM refuses more requests than tokens
    e.max_num_seqs = e.max_num_batched_tokens;
  pin_one(p.num_speculative_tokens, e.num_speculative_tokens);
  pin_one(p.cg_mode, e.cg_mode);
  if (p.max_capture_size && !p.capture_sizes) e.capture_sizes.clear();
  pin_one(p.capture_sizes, e.capture_sizes);
  pin_one(p.max_capture_size, e.max_capture_size);
  pin_one(p.flavour, e.flavour);
  pin_one(p.head_tile, e.head_tile);
  pin_one(p.mamba_block_size, e.mamba_block_size);
  pin_one(p.extra_group_block_size, e.extra_group_block_size);
}

void pin(const pinned_settings& p, check_case& c) {
  pin(p, c.engine);
  pin_one(p.block_size, c.block_size);
  pin_one(p.block_size, c.flashinfer.page_size);
  pin_one(p.kv_dtype, c.model.kv_dtype);
  pin_one(p.kv_cache, c.model.kv_cache);
  pin_one(p.tensor_core_decode, c.flashinfer.tensor_core_decode);
  pin_one(p.disable_split_kv, c.flashinfer.disable_split_kv);
  pin_one(p.prefill_sm90, c.flashinfer.prefill_sm90);
  pin_one(p.prefill_auto, c.flashinfer.prefill_auto);
  pin_one(p.trtllm_attention_off, c.flashinfer.trtllm_attention_off);
}

bool holds(const pinned_settings& p, const check_case& c) {
  check_case pinned = c;
  pin(p, pinned);
  return pinned == c && (!p.tps || std::find(p.tps->begin(), p.tps->end(), c.tp) != p.tps->end());
}

}  // namespace headroom::generators
