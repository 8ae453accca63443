// Plans and runs for one attention group: builds the backend's plan for a batch (FlashInfer splits
// a mixed batch into its decode and prefill parts), runs a layer through the executor and compares
// what it touched with what the plan holds.
#pragma once

#include <map>
#include <tuple>
#include <optional>
#include <string>
#include <vector>

#include "core/check/group_check.hpp"
#include "core/check/plans.hpp"

namespace headroom {

struct run_failure {
  std::string invariant;
  std::string buffer;
  int64_t capacity_bytes = 0;
  int64_t required_bytes = 0;
  std::string detail;
  bool is_capacity_failure = false;  // counts toward min_failing_decode_batch
};

struct tight_failure {
  std::string buffer;
  int64_t capacity_bytes = 0, required_bytes = 0;
  std::string detail;
  batch where;
};

class plan_runner {
 public:
  plan_runner(const group_context& ctx, int64_t builder_heads);
  std::vector<run_failure> run(const rank_layer& l, const batch& b);
  // Which decode batches to run: all of them for an exhaustive executor; otherwise every batch
  // whose plan buffers are used, up to a budget, around the model's threshold, plus one beyond.
  std::vector<std::size_t> sweep_points(const std::vector<batch>& sweep,
                                        const std::vector<const rank_layer*>& reps);
  std::vector<tight_failure> tight_failures() const;
  const std::string& note() const { return note_; }

  static constexpr std::size_t target_budget = 24;  // sim/gpu decode batches per group

 private:
  std::vector<planned_part> plans_for(const batch& b) const;
  void judge(std::size_t plan_kind, const std::vector<buffer_plan>& buffers, const observation& o, const rank_layer& l,
             const batch& b, std::vector<run_failure>& out);

  const group_context& ctx_;
  int64_t builder_heads_;
  // Largest need per plan buffer instance: (plan kind, buffer, capacity). A Triton plan is fixed
  // for the group; a FlashInfer plan is made per batch, so each capacity is its own instance.
  struct peak { int64_t need = 0; batch where; };
  std::map<std::tuple<std::size_t, std::string, int64_t>, peak> peaks_;
  std::string note_;
};

}  // namespace headroom
