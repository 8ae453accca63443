// FA3's attention call as vLLM's FlashAttentionImpl makes it after its builder's schedule, and the
// params mha_fwd (vllm-project/flash-attention hopper/flash_api.cpp, torch code, so restated here)
// gives FA3's kernels for it: varlen q (cu_seqlens_q = query_start_loc), a paged cache
// ([pages][page_size][kv heads][head size] for K, [..][head size v] for V, one page table row per
// request), seqused_k = seq_lens, max_seqlen_k given, the scheduler metadata given (so FA3 skips its
// own preparation), no softcap, appended KV, rotary, sinks or context parallelism, bf16 q/k/v/out. The
// call's own heads, head size and split count are the layer's: where they differ from the schedule's,
// mha_fwd's length check (CHECK_SHAPE) refuses or FA3's kernels run on another geometry's metadata,
// which is what the engine target observes.
#pragma once

#include <string>

#include "targets/engine/fa3/fa3_schedule.hpp"

namespace headroom::engine::fa3 {

struct attention_call {
  schedule_call run;  // the layer's: heads, kv heads, head size and v; the step's lengths; num_splits
  int total_q = 0;    // q's rows
  int num_pages = 0, pages_per_seq = 0;  // the caches' pages, the page table's width
  int kv_row_stride = 0;  // elements from one kv head's row to the next: d, 2d packed, d + dv DiffKV
  float softmax_scale = 0;
};

// Device pointers of the call's tensors (out_accum and softmax_lse_accum: [splits][heads][total_q]
// x head size v and [splits][heads][total_q] floats, as mha_fwd allocates them; used only when the
// call splits).
struct attention_tensors {
  void *q = nullptr, *k = nullptr, *v = nullptr, *out = nullptr;
  int *page_table = nullptr, *cu_seqlens_q = nullptr, *seqused_k = nullptr, *metadata = nullptr;
  float *softmax_lse = nullptr, *out_accum = nullptr, *softmax_lse_accum = nullptr;
};

struct attention {
  schedule s;           // the call's params (pointers set) and the metadata length mha_fwd expects
  bool splits = false;  // num_splits > 1: out_accum, softmax_lse_accum and the combine are used
};

// The call's params as mha_fwd sets them, on a device of `arch` with `num_sm` SMs. Call only when
// refusal(c.run) is empty.
attention attention_of(const attention_call& c, int arch, int num_sm, const attention_tensors& t);

// Empty when this driver's compiled kernels run the call (bf16, head size v = head size at most 256
// or 192 / 128, the paged cache read with or without TMA: fa3_attention_run.cu); else which
// instantiation it would need.
std::string unbuilt(const attention& a);

// mha_fwd's launch after its checks: FA3's forward kernel (which first prepares the metadata itself
// when skip_scheduler_metadata_computation is off), then the combine when split (which also clears
// the semaphore), else, on metadata prepared beforehand, the semaphore cleared. The CUDA error's
// text, empty on success.
std::string run_attention(attention& a);

}  // namespace headroom::engine::fa3
