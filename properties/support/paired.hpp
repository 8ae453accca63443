// An executor that runs every request twice: on the formulas (model) and on a second executor
// (the simulator), records where they disagree and what the second one saw, and returns the
// second one's observation so the checker judges the simulator. Differential testing in one run.
#pragma once

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/check/executor.hpp"

namespace headroom::props {

// A case's verdict as the differential properties compare them: group, invariant, buffer.
using verdict = std::tuple<int, std::string, std::string>;
// " [group G invariant buffer]..." or " (none)": one line for a failure message.
std::string describe(const std::set<verdict>& s);

// What one simulated run looked like.
struct run_record {
  std::string plan;       // triton | fi_decode | an engine step's metadata | offset_probe
  bool attention = true;  // an attention body (it has an output to compare)
  int64_t layer_heads = 0;
  int64_t builder_heads = 0;
  bool in_bounds = true;  // no access outside any buffer
  observation obs;
};

class paired_executor final : public executor {
 public:
  paired_executor(executor& model, executor& other) : model_(model), other_(other) {}
  target_kind kind() const override { return other_.kind(); }
  observation run(const run_request& r) override;

  // One sentence per disagreement: touched extents differ, an overflow seen by one side only,
  // an out-of-bounds access outside the plan's buffers, an exception.
  const std::vector<std::string>& disagreements() const { return disagreements_; }
  const std::vector<run_record>& records() const { return records_; }

 private:
  void compare(const run_request& r, const observation& m, const observation& s);

  executor& model_;
  executor& other_;
  std::vector<std::string> disagreements_;
  std::vector<run_record> records_;
};

}  // namespace headroom::props
