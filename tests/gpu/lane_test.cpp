// The GPU lane on a device (label gpu; exits 77, skipped, without one): the same bodies on the GPU
// agree with the simulator (outputs within the dtype tolerance, identical touched extents and
// out-of-bounds counts), with the fp32 reference, and with the guard bands; a planted overflow is
// caught by the guards and by the device-checked build (reads too), and a planted illegal address
// is isolated: the run reports the fault and the next run works.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "targets/gpu/gpu_executor.hpp"
#include "kernels/numeric.hpp"
#include "targets/sim/sim_executor.hpp"
#include "kernels/tolerance.hpp"
#include "tests/gpu/gpu_cases.hpp"
#include "tests/gpu/gpu_test_main.hpp"

namespace headroom {
namespace {

using gpu_test::owned_case;

// test_gpu_simworker runs these tests against tests/gpu/sim_worker.cpp (no guards, no faults).
bool simulated_worker() { return std::getenv("HEADROOM_GPU_WORKER_BIN") != nullptr; }

gpu_executor& shared_gpu() {
  static gpu_executor ex;  // checked + guarded, in a worker process
  return ex;
}

TEST(gpu_lane, outputs_match_the_simulator_and_the_reference) {
  for (uint64_t i = 0; i < 48; ++i) {
    const owned_case c = gpu_test::random_case(11, i, false);
    if (c.model_overflow) continue;
    const observation o = shared_gpu().run(c.request());
    const auto& d = shared_gpu().last();
    ASSERT_FALSE(o.faulted) << c.describe() << ": " << o.fault_detail;
    EXPECT_TRUE(o.output_checked) << c.describe();
    EXPECT_FALSE(o.output_mismatch) << c.describe() << ": " << o.mismatch_detail;
    EXPECT_EQ(d.unwritten, 0) << c.describe();
    // Element by element against the simulator's output, within the dtype tolerance.
    const auto sim = gpu_test::sim_output(c);
    const gpu::run_result* guarded = nullptr;
    for (const auto& r : d.runs)
      if (r.mode == gpu::run_mode::guarded) guarded = &r;
    ASSERT_NE(guarded, nullptr);
    const tolerance tol = tolerance_for(c.dt);
    const std::size_t esize = c.dt == dtype::fp32 ? 4 : 2;
    ASSERT_EQ(guarded->output.size(), sim.size() * esize) << c.describe();
    int bad = 0;
    for (std::size_t k = 0; k < sim.size() && bad < 3; ++k) {
      float g;
      if (esize == 4) {
        std::memcpy(&g, guarded->output.data() + 4 * k, 4);
      } else {
        uint16_t bits;
        std::memcpy(&bits, guarded->output.data() + 2 * k, 2);
        g = c.dt == dtype::bf16 ? to_float(bf16{bits}) : to_float(fp16{bits});
      }
      if (!(std::fabs(g - sim[k]) <= tol.atol + tol.rtol * std::fabs(sim[k]))) {
        ++bad;
        ADD_FAILURE() << c.describe() << ": output[" << k << "] gpu " << g << " sim " << sim[k];
      }
    }
  }
}

TEST(gpu_lane, sim_guard_and_checked_verdicts_agree) {
  sim_executor sim;
  int overflowing = 0;
  for (uint64_t i = 0; i < 60; ++i) {
    const owned_case c = gpu_test::random_case(23, i, i % 2 == 0);
    const observation s = sim.run(c.request());
    const observation g = shared_gpu().run(c.request());
    const auto sim_over = gpu_test::overflowing_buffers(c, s);
    const auto gpu_over = gpu_test::overflowing_buffers(c, g);
    overflowing += sim_over.empty() ? 0 : 1;
    EXPECT_EQ(sim_over, gpu_over) << c.describe();
    EXPECT_EQ(!sim_over.empty(), c.model_overflow) << c.describe();
    EXPECT_EQ(s.oob_count, g.oob_count) << c.describe();
    // Guards see the overflowing writes (every overflow here is a write past a plan buffer); the
    // simulated worker of test_gpu_simworker has no guard bands.
    if (!simulated_worker()) {
      EXPECT_EQ(g.guard_corrupted, !sim_over.empty()) << c.describe() << ": " << g.guard_detail;
    }
    EXPECT_FALSE(g.faulted) << c.describe() << ": " << g.fault_detail;
    ASSERT_EQ(s.touched.size(), g.touched.size()) << c.describe();
    for (std::size_t k = 0; k < s.touched.size(); ++k) {
      EXPECT_EQ(s.touched[k].name, g.touched[k].name) << c.describe();
      EXPECT_EQ(s.touched[k].elems, g.touched[k].elems) << c.describe() << " " << s.touched[k].name;
    }
  }
  EXPECT_GE(overflowing, 15);
}

// The planted kernel on the worker, device-checked and then guarded.
gpu::gpu_response checked_and_guarded(const gpu_test::planted_case& p) {
  gpu::gpu_request rq = gpu_test::planted_request(p);
  rq.modes = {gpu::run_mode::checked, gpu::run_mode::guarded};
  return shared_gpu().execute(rq);
}

TEST(gpu_lane, planted_overflow_is_caught_by_guards_and_the_checked_build) {
  gpu_test::planted_case p;
  p.out_extent = 1000, p.n_store = 1024, p.in_extent = 500, p.n_load = 520;
  const gpu::gpu_response resp = checked_and_guarded(p);
  ASSERT_EQ(resp.runs.size(), 2u) << resp.error;
  const auto& checked = resp.runs[0];
  const auto& guarded = resp.runs[1];
  const sim::sim_log sim = gpu_test::planted_on_sim(p);
  EXPECT_EQ(checked.oob_count, 24 + 20);
  EXPECT_EQ(checked.oob_count, sim.oob_count);
  EXPECT_EQ(checked.touched[0], 1024);
  EXPECT_EQ(checked.touched[1], 520);
  // The log keeps the first records in arrival order, so which of the 44 it holds is a race; the
  // reads are pinned alone below.
  EXPECT_EQ(checked.oob.size(), 16u);  // max_log_records
  ASSERT_EQ(guarded.guards.size(), 1u);
  EXPECT_EQ(guarded.guards[0].buffer, 0);
  // Bytes 4000..4095 were written; a byte that happens to equal its canary is not seen as changed.
  EXPECT_GE(guarded.guards[0].first, 4000);
  EXPECT_LE(guarded.guards[0].first, 4003);
  EXPECT_GE(guarded.guards[0].last, 4092);
  EXPECT_LE(guarded.guards[0].last, 4095);
  EXPECT_FALSE(guarded.faulted);
}

// Guards cannot see reads; the checked build does: 20 loads past the input, every store inside.
TEST(gpu_lane, planted_overread_is_caught_by_the_checked_build_alone) {
  gpu_test::planted_case p;
  p.out_extent = 1000, p.n_store = 1000, p.in_extent = 500, p.n_load = 520;
  const gpu::gpu_response resp = checked_and_guarded(p);
  ASSERT_EQ(resp.runs.size(), 2u) << resp.error;
  const auto& checked = resp.runs[0];
  EXPECT_EQ(checked.oob_count, 20);
  EXPECT_EQ(checked.oob_count, gpu_test::planted_on_sim(p).oob_count);
  EXPECT_EQ(checked.touched[1], 520);
  ASSERT_EQ(checked.oob.size(), 16u);
  for (const auto& r : checked.oob) {
    EXPECT_FALSE(r.write);
    EXPECT_EQ(r.buffer_id, 1);
    EXPECT_GE(r.index, 500);
    EXPECT_LT(r.index, 520);
  }
  EXPECT_TRUE(resp.runs[1].guards.empty());
  EXPECT_FALSE(resp.runs[1].faulted);
}

// The guard check walks the bands only, in 16-byte chunks; a buffer whose end is not 16-aligned
// shares its last chunk with the band after it. One element past that end, and one before the
// start, must still be seen.
TEST(gpu_lane, one_element_past_an_unaligned_end_or_before_the_start_is_caught_by_guards) {
  struct probe {
    int64_t offset, n_store, first, last;  // bytes written, relative to the buffer's start
  };
  for (const probe& pr : {probe{1001, 1, 4004, 4007}, probe{-1, 1, -4, -1}}) {
    gpu_test::planted_case p;
    p.out_extent = 1001, p.offset = pr.offset, p.n_store = pr.n_store;  // 4004 bytes: 4 past a chunk
    gpu::gpu_request rq = gpu_test::planted_request(p);
    rq.modes = {gpu::run_mode::guarded};
    const gpu::gpu_response resp = shared_gpu().execute(rq);
    ASSERT_EQ(resp.runs.size(), 1u) << resp.error;
    const auto& g = resp.runs[0];
    ASSERT_EQ(g.guards.size(), 1u) << "offset " << pr.offset;
    EXPECT_EQ(g.guards[0].buffer, 0);
    EXPECT_GE(g.guards[0].first, pr.first);
    EXPECT_LE(g.guards[0].last, pr.last);
    EXPECT_GE(g.guards[0].corrupted_bytes, 1);
  }
}

TEST(gpu_lane, a_faulting_case_is_isolated) {
  gpu_test::planted_case p;
  p.n_store = 256, p.offset = int64_t{1} << 40;  // 4 TiB past the buffer: an illegal address
  gpu::gpu_request rq = gpu_test::planted_request(p);
  rq.modes = {gpu::run_mode::checked, gpu::run_mode::guarded};
  const owned_case c = gpu_test::random_case(5, 1, false);
  ASSERT_FALSE(shared_gpu().run(c.request()).faulted);  // a worker is up
  const int starts = shared_gpu().worker_starts();
  const gpu::gpu_response resp = shared_gpu().execute(rq);
  ASSERT_EQ(resp.runs.size(), 2u) << resp.error << shared_gpu().last().death;
  EXPECT_FALSE(resp.runs[0].faulted);  // the checked build drops the access and logs it
  EXPECT_EQ(resp.runs[0].oob_count, 256);
  EXPECT_TRUE(resp.runs[1].faulted);
  std::printf("fault reported: %s\n", resp.runs[1].fault.c_str());
  EXPECT_TRUE(resp.worker_exiting);
  // The next case runs in a fresh worker.
  const observation o = shared_gpu().run(c.request());
  EXPECT_FALSE(o.faulted) << o.fault_detail;
  EXPECT_EQ(shared_gpu().worker_starts(), starts + 1);
}

}  // namespace
}  // namespace headroom
