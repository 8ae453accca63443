// Checking one attention group of one backend at one TP size: resolve the builder's heads, choose
// the decode batches to run, plan each batch, run every distinct layer geometry through the
// executor and fold what it saw into violations and the group's threshold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/check/check.hpp"
#include "core/check/plans.hpp"

namespace headroom {

// The decode batches a group is checked on, made one at a time (a whole-model check's sweep of
// 1..N requests would otherwise hold N^2 / 2 lengths): either uniform (batch i has i + 1 requests
// of seq_len tokens) or the given batches (a single case).
class decode_sweep {
 public:
  static decode_sweep uniform(int64_t max_num_seqs, int64_t seq_len);
  static decode_sweep of(std::vector<batch> batches);
  std::size_t size() const;
  batch at(std::size_t i) const;

 private:
  int64_t count_ = 0, seq_len_ = 0;
  std::vector<batch> given_;
};

struct group_context {
  const engine* eng = nullptr;
  const attention_group* ag = nullptr;
  const check_case& base;  // the case the group's runs start from
  executor* ex = nullptr;
  std::optional<double> tight;
  bool whole_model = false;  // a whole-model check: class checks walk every step of the settings
  // The template of the violations' cases (base without its model, which they share), made once
  // per check; when null, each violation copies base.
  const check_case* shell = nullptr;
  std::shared_ptr<const model_geometry> model;
};

struct group_result {
  std::vector<violation> violations;
  std::vector<threshold> thresholds;  // the decode sweep's, then one per class variable
  std::vector<std::string> notes;
};

// `sweep` counts toward min_failing_decode_batch; `extra` holds prefill and mixed batches.
group_result check_group(const group_context& ctx, const decode_sweep& sweep,
                         const std::vector<batch>& extra);

}  // namespace headroom
