// One scheduler-metadata call as vLLM's FlashAttention builder (or SGLang's backend) makes it, and
// FA3's refusal of it: the part of FA3's host rules that needs none of FA3's headers, shared by the
// restatements of vLLM's fork (fa3_schedule.hpp) and of Dao-AILab's tree (fa3_upstream_schedule.hpp).
#pragma once

#include <string>

namespace headroom::engine::fa3 {

// The call (fa3_launch.hpp for vLLM's): paged always, no softcap, appended KV, left padding or
// attention chunk, sm_margin 0. headdim_v 0 is the head size (vLLM's builder passes none; FA3's
// Python wrapper then sends headdim); mha_fwd's own rules take it from the v tensor.
struct schedule_call {
  int batch = 0, max_seqlen_q = 1, max_seqlen_k = 0;
  int num_heads = 1, num_heads_k = 1, headdim = 128, page_size = 16, headdim_v = 0;
  bool causal = true, e4m3 = false;
  int window_left = -1, window_right = -1;
  int num_splits = 0;  // as passed: 0 lets the heuristic choose
};

// Empty when FA3 takes the call; else the message FA3 raises with (its query heads must be a whole
// multiple of its kv heads).
inline std::string refusal(const schedule_call& c) {
  if (c.num_heads_k <= 0 || c.num_heads % c.num_heads_k != 0)
    return "FA3: Number of heads in key/value must divide number of heads in query";
  return {};
}

}  // namespace headroom::engine::fa3
