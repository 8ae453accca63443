// Property (label gpu; exits 77, skipped, without a device): the simulator and the GPU agree on
// every verdict of a generated case. Per run (paired_executor, the simulator on the reference
// side): the same touched extent of every plan buffer and an overflow on both sides or neither.
// Per case: the same out_of_bounds (group, buffer) pairs from the simulator and the device-checked
// build, and the same group_agreement / plan_run_heads / fallback / index_overflow verdicts; the
// guard bands corrupted in exactly the groups where the simulator saw an out-of-bounds access; no
// output_mismatch (fp32 reference, dtype tolerance) in a group the simulator found in bounds.
// prop_sim_gpu_simworker runs it on any machine against tests/gpu/sim_worker.cpp (no guard bands
// there: HEADROOM_GPU_SIMULATED skips the guard clause).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <tuple>

#include "core/check/check.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "properties/support/edited.hpp"
#include "properties/support/engine_view.hpp"
#include "properties/support/paired.hpp"
#include "properties/support/prop_check.hpp"
#include "properties/support/profiles.hpp"

namespace headroom {
namespace {

bool simulated_worker() { return std::getenv("HEADROOM_GPU_SIMULATED") != nullptr; }

// One worker process for the whole binary (starting one initialises CUDA).
executor& shared_gpu() {
  static const std::unique_ptr<executor> gpu = make_gpu_executor();
  return *gpu;
}

using props::verdict;

std::set<int> groups_with(const report& r, invariant i) {
  std::set<int> out;
  for (const auto& v : r.violations)
    if (v.inv == i) out.insert(v.group);
  return out;
}

// A GPU fault is reported as an out_of_bounds finding without a buffer.
bool is_fault(const violation& v) { return v.inv == invariant::out_of_bounds && v.buffer.empty(); }

// `explained`: groups whose faults the other side's out-of-bounds accesses account for (an
// out-of-bounds read of an index, a block-table entry or a prefix sum, gives the simulator poison
// it stops at and the GPU a stale index it follows to an illegal address); those faults are left out.
std::set<verdict> verdicts(const report& r, const std::set<invariant>& kinds,
                           const std::set<int>& explained = {}) {
  std::set<verdict> out;
  for (const auto& v : r.violations)
    if (kinds.count(v.inv) && !(is_fault(v) && explained.count(v.group)))
      out.insert({v.group, to_string(v.inv), v.inv == invariant::out_of_bounds ? v.buffer : ""});
  return out;
}

// Groups where the simulator saw an out-of-bounds write to a global buffer: what guard bands see
// (they see no reads, and shared memory has none).
std::set<int> groups_written_past(const report& r) {
  std::set<int> out;
  for (const auto& v : r.violations)
    if (v.inv == invariant::out_of_bounds && v.buffer.rfind("shared:", 0) != 0 &&
        v.detail.find("write of") != std::string::npos)
      out.insert(v.group);
  return out;
}

// `gpu` is the executor under test (the real one, or a planted fault around it).
void sim_and_gpu_agree(const check_case& c, executor& gpu) {
  auto sim_a = props::make_sim(), sim_b = props::make_sim();
  props::paired_executor paired(*sim_a, gpu);
  const report rs = run_case(c, *sim_b);
  const report rg = run_case(c, paired);
  RC_CLASSIFY(!groups_with(rs, invariant::out_of_bounds).empty(), "sim saw an overflow");
  RC_TAG(to_string(c.be), to_string(c.pol));
  if (!paired.disagreements().empty()) RC_FAIL("per run: " + paired.disagreements().front());
  const std::set<invariant> kinds{
      invariant::out_of_bounds,       invariant::group_agreement, invariant::plan_run_heads,
      invariant::fallback_when_empty, invariant::index_overflow,  invariant::plan_run_shape,
      invariant::path_choice,         invariant::block_unit,      invariant::buffer_capacity};
  const auto over = groups_with(rs, invariant::out_of_bounds);
  const auto vs = verdicts(rs, kinds), vg = verdicts(rg, kinds, over);
  if (vs != vg) RC_FAIL("verdicts differ: sim" + props::describe(vs) + " vs gpu" + props::describe(vg));
  const auto guards = groups_with(rg, invariant::guard_corrupted), written = groups_written_past(rs);
  if (!simulated_worker() && !std::includes(over.begin(), over.end(), guards.begin(), guards.end()))
    RC_FAIL("guard bands corrupted in a group where the simulator saw no out-of-bounds access");
  if (!simulated_worker() && !std::includes(guards.begin(), guards.end(), written.begin(), written.end()))
    RC_FAIL("the simulator wrote past a buffer in a group whose guard bands are intact");
  // In bounds, the outputs' verdicts are the same: right on both, or wrong on both (a prefill plan
  // for fewer heads per kv head than the layer has leaves rows no block computes).
  const auto sim_bad = groups_with(rs, invariant::output_mismatch);
  for (int g : groups_with(rg, invariant::output_mismatch))
    if (!over.count(g) && !sim_bad.count(g))
      RC_FAIL("gpu output differs from the reference in in-bounds group " + std::to_string(g) +
              " where the simulator's matches");
  for (int g : sim_bad)
    if (!over.count(g) && !groups_with(rg, invariant::output_mismatch).count(g))
      RC_FAIL("the simulator's output differs from the reference in in-bounds group " + std::to_string(g) +
              " where the gpu's matches");
}

const props::budget budget{40, 0, 100};

TEST(SimGpu, AgreeOnEveryVerdict) {
  const auto p = props::everything();
  props::check([p] { sim_and_gpu_agree(*generators::cases(p), shared_gpu()); }, budget);
}

// The regressed policy alone: most cases overflow, so the overflow clauses are exercised.
TEST(SimGpu, AgreeOnTheRegressedPolicy) {
  const auto p = props::regressed();
  props::check([p] { sim_and_gpu_agree(*generators::cases(p), shared_gpu()); }, budget);
}

// One mutant of the catalogue per case, drawn: overflows of the engine-step metadata (FA3's
// scheduler metadata, per-request metadata, the block table, DeepGEMM's schedule, draft passes' q)
// besides the attention buffers, so the metadata kernels' out-of-bounds clauses are exercised too.
TEST(SimGpu, AgreeUnderEachCatalogueMutant) {
  const auto p = props::everything();
  props::check(
      [p] {
        check_case c = *generators::cases(p);
        const auto& m = *rc::gen::elementOf(all_mutants());
        c.mutants = {std::string(m.name)};
        RC_TAG(to_string(m.cls));
        sim_and_gpu_agree(c, shared_gpu());
      },
      budget);
}

TEST(SimGpu, DetectsAPlantedUnderReport) {
  const auto p = props::everything();
  const auto r = props::run(
      [p] {
        // a device-checked build that under-reports by one element
        props::edited_executor gpu(shared_gpu(), props::one_element_short);
        sim_and_gpu_agree(*generators::cases(p), gpu);
      },
      budget);
  ASSERT_TRUE(props::is_failure(r)) << "a device that under-reports went unnoticed";
}

}  // namespace
}  // namespace headroom

int main(int argc, char** argv) {
  if (headroom::gpu_device_count() == 0) {
    std::printf("prop_sim_gpu: no GPU device, skipped\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  headroom::props::init_profile(argc, argv);
  return RUN_ALL_TESTS();
}
