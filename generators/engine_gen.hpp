// RapidCheck generators of the engine a case runs under and of the case's step (docs/catalogue.md
// C3-C8), aimed at the regions where the engine-step classes fail: CUDA-graph modes with FULL
// mixed graphs, max_model_len below the capture sizes, speculative tokens (draft passes),
// SGLang's attention-TP padding and vllm-ascend's dummy request, capture-size lists at a request
// pool's size or cut at max_num_seqs, and compressed layers whose dummy work is empty at multiples
// of 32 requests.
#pragma once

#include <cstdint>

#include <rapidcheck.h>

#include "core/check/case.hpp"
#include "generators/pinned.hpp"

namespace headroom::generators {

// The engine settings beside max_num_seqs (which the case's options draw): CUDA-graph mode,
// max_model_len, speculative tokens, flavour and SGLang's attention TP, gather and pool, and now and
// then an explicit capture list ending past the block table's rows or at the pool's size, or
// max_cudagraph_capture_size = max_num_seqs. A pinned setting
// is taken instead of its draw (a pinned max_model_len or capture list also over the list's).
rc::Gen<engine_settings> engine_settings_for(int64_t max_num_seqs, const pinned_settings& pins = {});

// A compression ratio for a case's first attention layer (mostly none).
rc::Gen<int64_t> compress_ratios();

// A step the case's settings allow: a scheduled forward, the dummy run of one of its FULL graphs
// whose work (batch_work) stays within max_work, or a draft pass (num_speculative_tokens > 0).
rc::Gen<step_spec> steps_for(const check_case& c, int64_t max_work);

// The case's batch made fit for its step: a draft pass's verify batch (1 + k new tokens per request,
// at most max_num_seqs requests of at most max_model_len tokens), a dummy run's one short request
// (the dummy invents its own).
batch batch_for_step(const check_case& c, batch b);

}  // namespace headroom::generators
