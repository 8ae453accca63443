// ctx.wait_prior_launch() in the simulator: a body that declares waits_for_prior_launch may read
// host-filled inputs before the wait and what earlier launches wrote only after it; a view of a
// buffer launches write opened before the wait, a wait in a body that does not declare it, a
// second wait and a wait inside threads() are misuse. The native context runs the same bodies.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/sim/launch.hpp"
#include "core/sim/native_context.hpp"
#include "tests/sim/sim_test_support.hpp"

namespace headroom::sim {
namespace {

constexpr int64_t blocks = 3;

enum class plan { inputs_then_wait, scratch_before_wait, wait_twice, wait_in_threads };

struct pass_params {
  buffer_ref<const float> in;    // host-filled: a scale per block
  buffer_ref<const float> prev;  // written by the launch before: a value per thread
  buffer_ref<float> out;
  plan how = plan::inputs_then_wait;
};

// out[b][t] = in[b] * prev[b][t]: the scale is read before the wait, prev after it (as the reduce
// and merge bodies read their request's inputs first).
template <bool Declares>
struct pass_kernel : tile_kernel<blocks> {
  using params = pass_params;
  static constexpr bool waits_for_prior_launch = Declares;

  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage&) const {
    const int64_t b = ctx.block_idx().x;
    const float scale = ctx.global(p.in).load(b);
    if (p.how == plan::scratch_before_wait) (void)ctx.global(p.prev);
    if (p.how == plan::wait_in_threads)
      ctx.threads([&](const thread_idx&) { ctx.wait_prior_launch(); });
    else
      ctx.wait_prior_launch();
    if (p.how == plan::wait_twice) ctx.wait_prior_launch();
    const auto prev = ctx.global(p.prev);
    const auto out = ctx.global(p.out);
    ctx.threads([&](const thread_idx& t) {
      const int64_t i = b * n_threads + t.x;
      out.store(i, scale * prev.load(i));
    });
  }
};

// The launch before: prev[i] = i + 1.
struct fill_kernel : tile_kernel<blocks> {
  struct params {
    buffer_ref<float> prev;
  };
  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage&) const {
    const auto prev = ctx.global(p.prev);
    const int64_t b = ctx.block_idx().x;
    ctx.threads([&](const thread_idx& t) {
      const int64_t i = b * n_threads + t.x;
      prev.store(i, static_cast<float>(i + 1));
    });
  }
};

struct pass_run {
  memory m;
  std::vector<float> got;
  template <bool Declares>
  void run(plan how) {
    const auto in = m.upload("in", std::vector<float>{2.0f, 3.0f, 4.0f});
    const auto prev = m.alloc<float>("prev", blocks * n_threads, fill::scratch);
    const auto out = m.alloc<float>("out", blocks * n_threads, fill::scratch);
    launch(m, fill_kernel{}, {prev});
    launch(m, pass_kernel<Declares>{}, {in, {prev.data, prev.extent, prev.id}, out, how});
    got = m.download(out);
  }
  std::string first_misuse() const { return m.log.misuse.empty() ? "" : m.log.misuse[0]; }
};

TEST(PriorLaunch, InputsBeforeTheWaitAndTheLaunchBeforesOutputAfterItAreClean) {
  pass_run r;
  r.run<true>(plan::inputs_then_wait);
  EXPECT_EQ(r.m.log.misuse_count + r.m.log.oob_count + r.m.log.uninitialized_reads + r.m.log.races, 0)
      << r.m.log.describe();
  for (int64_t i = 0; i < blocks * n_threads; ++i)
    EXPECT_EQ(r.got[static_cast<std::size_t>(i)], static_cast<float>((2 + i / n_threads) * (i + 1)));
}

TEST(PriorLaunch, TheNativeContextComputesTheSame) {
  pass_run checked;
  checked.run<true>(plan::inputs_then_wait);
  std::vector<float> in{2.0f, 3.0f, 4.0f}, prev(blocks * n_threads), out(prev.size(), -1.0f);
  launch_native(fill_kernel{}, {{prev.data(), static_cast<int64_t>(prev.size())}});
  launch_native(pass_kernel<true>{}, {{in.data(), static_cast<int64_t>(in.size())},
                                      {prev.data(), static_cast<int64_t>(prev.size())},
                                      {out.data(), static_cast<int64_t>(out.size())}});
  EXPECT_EQ(out, checked.got);
}

TEST(PriorLaunch, AViewOfAWrittenBufferBeforeTheWaitIsMisuseNamingTheBuffer) {
  pass_run r;
  r.run<true>(plan::scratch_before_wait);
  EXPECT_EQ(r.m.log.misuse_count, blocks);  // once per block
  EXPECT_NE(r.first_misuse().find("global(prev) before wait_prior_launch()"), std::string::npos)
      << r.first_misuse();
}

TEST(PriorLaunch, AWaitInABodyThatDoesNotDeclareItIsMisuse) {
  pass_run r;
  r.run<false>(plan::inputs_then_wait);
  EXPECT_EQ(r.m.log.misuse_count, blocks);
  EXPECT_NE(r.first_misuse().find("does not declare"), std::string::npos) << r.first_misuse();
}

TEST(PriorLaunch, ASecondWaitAndAWaitInsideThreadsAreMisuse) {
  pass_run twice;
  twice.run<true>(plan::wait_twice);
  EXPECT_EQ(twice.m.log.misuse_count, blocks);
  EXPECT_NE(twice.first_misuse().find("twice"), std::string::npos) << twice.first_misuse();
  pass_run inside;
  inside.run<true>(plan::wait_in_threads);
  EXPECT_GE(inside.m.log.misuse_count, blocks);
  EXPECT_NE(inside.first_misuse().find("inside threads()"), std::string::npos) << inside.first_misuse();
}

}  // namespace
}  // namespace headroom::sim
