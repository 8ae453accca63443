// Checking one attention group of one backend at one TP size: resolve heads, plan each batch, run
// every distinct layer geometry through the executor and fold what it saw into violations.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/check/check.hpp"
#include "core/engine/engine.hpp"

namespace headroom {

struct group_context {
  const rank_geometry* rg = nullptr;
  const registry* reg = nullptr;
  const attention_group* ag = nullptr;
  check_case base;                 // template for repro cases (batch filled per violation)
  executor* ex = nullptr;
  std::optional<double> tight;
};

struct group_result {
  std::vector<violation> violations;
  std::optional<threshold> thr;
  std::vector<std::string> notes;
};

// decode_sweep: batches counted toward min_failing_decode_batch (batch i has i+1 requests);
// extra: prefill and mixed batches.
group_result check_group(const group_context& ctx, const std::vector<batch>& decode_sweep,
                         const std::vector<batch>& extra);

}  // namespace headroom
