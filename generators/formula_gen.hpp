// Draws of the settings only the formulas judge (case_profile::formulas_only, the model target):
// an fp8 KV cache, which the sim, gpu and engine targets refuse (they run 16-bit and fp32 bodies),
// vLLM's use_trtllm_attention=False, read only with an fp8 cache, and blocks of 128 tokens, which
// users set with --block-size (FA3 reads such a cache through TMA) and which would make the
// simulator's paged caches eight times those of 16-token blocks.
#pragma once

#include <utility>
#include <vector>

#include <rapidcheck.h>

#include "core/check/case.hpp"
#include "generators/pinned.hpp"

namespace headroom::generators {

// The caches drawn for a backend, with their weights: the model's dtype mostly, else the fp8
// formats vLLM runs it with: e4m3 everywhere, e5m2 with FlashInfer only (FLASH_ATTN refuses it,
// TRITON_ATTN asserts on it: docs/audit.md).
std::vector<std::pair<int, kv_quant>> drawn_caches(backend be);

// True when vLLM's use_trtllm_attention=False changes the case's plans: FlashInfer under
// --flashinfer-prefill auto, where the decode wrapper's query dtype (fi_q_dtype) differs with it.
bool trtllm_off_matters(const check_case& c);

// The cases of `g` with a drawn fp8 cache (none where pinned, or under pinned CUDA-core decode: an
// fp8 cache decodes on tensor cores, which a drawn one switches on), where it matters a drawn
// use_trtllm_attention=False, and one time in eight blocks of 128 tokens; then the pins again.
rc::Gen<check_case> with_formula_settings(rc::Gen<check_case> g, const pinned_settings& pins);

}  // namespace headroom::generators
