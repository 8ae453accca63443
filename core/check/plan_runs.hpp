// Plans and runs for one attention group: builds the backend's plans for a batch, runs a layer on
// them through the executor and judges what it touched against what the plans hold. Also the
// choice of decode batches for the targets that run kernels (select_sweep).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/check/group_check.hpp"

namespace headroom {

class plan_runner {
 public:
  plan_runner(const group_context& ctx, int64_t builder_heads);
  std::vector<finding> run(const rank_layer& l, const batch& b);
  // Runs the given plans of layer l (an engine step's: `step` non-null for a dummy run or a draft
  // pass, whose attention inputs take the engine's persistent shapes) and judges them as run() does.
  std::vector<finding> run_parts(const rank_layer& l, const std::vector<planned_part>& parts,
                                 const engine_step* step);
  std::vector<planned_part> plans_for(const batch& b) const;
  // Buffers more than `tight` x their largest need, with the batch of that need.
  std::vector<std::pair<finding, batch>> tight_findings() const;

 private:
  void judge(const any_plan& plan, const observation& o, const rank_layer& l, const batch& b,
             std::vector<finding>& out);

  const group_context& ctx_;
  int64_t builder_heads_;
  // Largest need per plan buffer instance: (plan kind, buffer, capacity). A Triton plan is fixed
  // for the group; a FlashInfer plan is made per batch, so each capacity is its own instance.
  struct peak {
    int64_t need = 0;
    batch where;
  };
  std::map<std::tuple<std::size_t, std::string, int64_t>, peak> peaks_;
};

// Sim / gpu decode batches per group (the formulas run every batch).
inline constexpr std::size_t target_budget = 24;

struct sweep_selection {
  std::vector<std::size_t> points;  // indices into the sweep, ascending
  std::string note;                 // empty when every batch runs
};

// Which decode batches to run: all of them on the formulas; for the kernels, every batch whose plan
// buffers are used (up to target_budget of them, spread), the formulas' first failure and its
// predecessor, and one beyond the last batch that uses the buffers.
sweep_selection select_sweep(const group_context& ctx, int64_t builder_heads, const decode_sweep& sweep,
                             const std::vector<const rank_layer*>& reps);

}  // namespace headroom
