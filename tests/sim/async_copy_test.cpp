// Asynchronous copies (ctx.copy_async / async_commit / async_wait, cp.async on a GPU) in the
// simulator: the bytes land at the wait that completes their group, so a read before it is an
// uninitialized read naming the copying thread; another thread's chunk needs a barrier too; an
// out-of-bounds source is recorded like a load; copies never waited for and misaligned ones are
// misuse; the native context gives the same result for a correct body.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/sim/launch.hpp"
#include "core/sim/native_context.hpp"
#include "targets/gpu/launch/planted.hpp"
#include "tests/sim/sim_test_support.hpp"

namespace headroom::sim {
namespace {

constexpr int64_t V = 4;  // floats per copy: 16 bytes

enum class plan {
  correct,
  read_before_wait,
  neighbour,
  neighbour_after_barrier,
  never_wait,
  two_groups,
  misaligned
};

struct copy_params {
  buffer_ref<const float> in;
  buffer_ref<float> out;  // [thread][2][V]: what the thread read of region 0 and region 1
  plan how;
};

// Thread t copies in[V t ..] to region 0 and in[V (n + t) ..] to region 1 of shared memory (one
// group each), then reads back per `how`.
struct copy_kernel {
  using params = copy_params;
  struct shared_storage {
    alignas(16) float a[2 * n_threads * V];
  };
  static launch_dim grid(const params&) { return {1, 1, 1}; }
  static launch_dim block(const params&) { return {n_threads, 1, 1}; }

  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const auto in = ctx.global(p.in);
    const auto out = ctx.global(p.out);
    const auto a = ctx.template shared<V>(s.a, "a");
    const int64_t skew = p.how == plan::misaligned ? 1 : 0;
    for (int64_t region = 0; region < 2; ++region) {
      ctx.threads([&](const thread_idx& t) {
        const int64_t at = (region * n_threads + t.x) * V;
        ctx.template copy_async<V>(a, at + skew, in, at);
      });
      ctx.async_commit();
    }
    const auto read = [&](int64_t region, int64_t shift) {
      ctx.threads([&](const thread_idx& t) {
        const int64_t from = (region * n_threads + (t.x + shift) % n_threads) * V;
        out.template store_vec<V>((t.x * 2 + region) * V, a.template load_vec<V>(from));
      });
    };
    switch (p.how) {
      case plan::read_before_wait:
        read(0, 0);
        ctx.template async_wait<0>();
        break;
      case plan::two_groups:  // region 0 has landed after wait<1>, region 1 not yet
        ctx.template async_wait<1>();
        read(0, 0);
        read(1, 0);
        ctx.template async_wait<0>();
        break;
      case plan::never_wait:
        break;
      default:
        ctx.template async_wait<0>();
        if (p.how == plan::neighbour_after_barrier) ctx.sync();
        const int64_t shift = p.how == plan::neighbour || p.how == plan::neighbour_after_barrier ? 1 : 0;
        read(0, shift);
        read(1, shift);
    }
  }
};

std::vector<float> iota_floats(int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
  return v;
}

struct copy_run {
  memory m;
  std::vector<float> src, got;
  explicit copy_run(plan how, int64_t in_elems = 2 * n_threads * V) {
    src = iota_floats(in_elems);
    auto in = m.upload("in", src);
    auto out = m.alloc<float>("out", 2 * n_threads * V, fill::scratch);
    launch(m, copy_kernel{}, {in, out, how});
    got = m.download(out);
  }
  // What thread t read of `region`, element e, and what the source holds for thread `from` there.
  float read(int64_t t, int64_t region, int64_t e) const {
    return got[static_cast<std::size_t>((t * 2 + region) * V + e)];
  }
  float source(int64_t from, int64_t region, int64_t e) const {
    return src[static_cast<std::size_t>((region * n_threads + from) * V + e)];
  }
  int64_t records() const {
    return m.log.oob_count + m.log.uninitialized_reads + m.log.races + m.log.misuse_count;
  }
};

TEST(AsyncCopy, LandsAtTheWaitAndReadsBackExactly) {
  copy_run r(plan::correct);
  EXPECT_EQ(r.records(), 0);
  for (int64_t t = 0; t < n_threads; ++t)
    for (int64_t region = 0; region < 2; ++region)
      for (int64_t e = 0; e < V; ++e) EXPECT_EQ(r.read(t, region, e), r.source(t, region, e));
  EXPECT_EQ(r.m.at(0).stats.touched, 2 * n_threads * V);  // the source counts as read
}

TEST(AsyncCopy, ReadBeforeTheWaitIsAnUninitializedReadOfTheCopyingThread) {
  const copy_run r(plan::read_before_wait);
  EXPECT_EQ(r.m.log.uninitialized_reads, n_threads);  // one granule of V floats per thread
  EXPECT_EQ(r.m.log.races + r.m.log.misuse_count + r.m.log.oob_count, 0);
  const sim_hazard& h = r.m.log.hazards.at(1);
  EXPECT_EQ(h.kind, hazard_kind::uninitialized_read);
  EXPECT_EQ(h.buffer, "shared:a");
  EXPECT_EQ(h.index, V);
  EXPECT_EQ(h.thread[0], 1);
  EXPECT_EQ(h.other_thread[0], 1);
  EXPECT_TRUE(std::isnan(r.read(1, 0, 0)));
}

TEST(AsyncCopy, WaitKeepsTheNewestGroupsInFlight) {
  const copy_run r(plan::two_groups);
  EXPECT_EQ(r.m.log.uninitialized_reads, n_threads);  // region 1 only
  for (int64_t t = 0; t < n_threads; ++t) {
    EXPECT_EQ(r.read(t, 0, 0), r.source(t, 0, 0));
    EXPECT_TRUE(std::isnan(r.read(t, 1, 0)));
  }
}

TEST(AsyncCopy, AnotherThreadsChunkNeedsABarrierAfterTheWait) {
  const copy_run racy(plan::neighbour);
  EXPECT_EQ(racy.m.log.races, 2 * n_threads);
  const sim_hazard& h = racy.m.log.hazards.at(0);
  EXPECT_EQ(h.kind, hazard_kind::read_after_write);
  EXPECT_EQ(h.thread[0], 0);
  EXPECT_EQ(h.other_thread[0], 1);
  const copy_run ok(plan::neighbour_after_barrier);
  EXPECT_EQ(ok.records(), 0);
  EXPECT_EQ(ok.read(n_threads - 1, 1, 2), ok.source(0, 1, 2));
}

TEST(AsyncCopy, OutOfBoundsSourceIsRecordedAndLandsAsPoison) {
  const copy_run r(plan::correct, 2 * n_threads * V - 2);  // the last thread's region-1 copy runs over
  EXPECT_EQ(r.m.log.oob_count, 2);
  const sim_access& a = r.m.log.oob.at(0);
  EXPECT_EQ(a.buffer, "in");
  EXPECT_FALSE(a.write);
  EXPECT_EQ(a.index, 2 * n_threads * V - 2);
  EXPECT_EQ(a.thread[0], n_threads - 1);
  EXPECT_TRUE(std::isnan(r.read(n_threads - 1, 1, 3)));
}

TEST(AsyncCopy, NeverWaitedAndMisalignedCopiesAreMisuse) {
  const copy_run never(plan::never_wait);
  EXPECT_EQ(never.m.log.misuse_count, 1);
  ASSERT_FALSE(never.m.log.misuse.empty());
  EXPECT_NE(never.m.log.misuse[0].find("never waited"), std::string::npos) << never.m.log.misuse[0];
  const copy_run skewed(plan::misaligned);
  EXPECT_GE(skewed.m.log.misuse_count, n_threads);
  EXPECT_NE(skewed.m.log.misuse[0].find("aligned"), std::string::npos) << skewed.m.log.misuse[0];
}

TEST(AsyncCopy, NativeContextGivesTheSameResult) {
  const copy_run checked(plan::correct);
  const auto src = iota_floats(2 * n_threads * V);
  std::vector<float> out(src.size(), -1.0f);
  launch_native(copy_kernel{}, {{src.data(), static_cast<int64_t>(src.size())},
                                {out.data(), static_cast<int64_t>(out.size())},
                                plan::correct});
  EXPECT_EQ(out, checked.got);
}

// The GPU lane's planted kernel loads through an asynchronous copy: its out-of-bounds reads are
// recorded at the copy, attributed to the copying thread (the GPU lane compares these with the
// device-checked build's records).
TEST(AsyncCopy, PlantedKernelRecordsItsReadsAtTheCopy) {
  memory m;
  auto out = m.alloc<float>("out", 1000, fill::scratch);
  auto in = m.upload("in", std::vector<float>(500, 1.0f));
  launch(m, planted_store{}, {out, in, 1024, 520, 0});
  EXPECT_EQ(m.log.oob_count, 24 + 20);
  EXPECT_EQ(m.log.misuse_count + m.log.races + m.log.uninitialized_reads, 0);
  const auto first_read =
      std::find_if(m.log.oob.begin(), m.log.oob.end(), [](const sim_access& a) { return !a.write; });
  ASSERT_NE(first_read, m.log.oob.end());
  EXPECT_EQ(first_read->buffer, "in");
  EXPECT_EQ(first_read->index, 500);
  EXPECT_EQ(first_read->block[0], 3);  // 500 = 3 * 128 + 116
  EXPECT_EQ(first_read->thread[0], 116);
}

}  // namespace
}  // namespace headroom::sim
