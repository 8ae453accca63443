// Barrier semantics of the simulator: a read of shared memory another thread wrote in the same
// epoch sees poison and is recorded with both threads; after the barrier it sees the value; a
// missing barrier (in a block reduction, or before a tile is overwritten) is caught; and the log
// is deterministic.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/sim/launch.hpp"
#include "tests/sim/sim_test_support.hpp"

namespace headroom::sim {
namespace {

// The kernels here read `in` and write `out`; `barrier` false plants a missing barrier.
struct barrier_params {
  buffer_ref<const float> in;
  buffer_ref<float> out;
  bool barrier;
};

// Thread t publishes in[t] to shared memory, then reads its left neighbour's value.
struct neighbour_kernel : tile_kernel<2> {
  using params = barrier_params;
  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const auto in = ctx.global(p.in);
    const auto out = ctx.global(p.out);
    const auto a = ctx.shared(s.tile, "a");
    const int64_t base = ctx.block_idx().x * n_threads;
    ctx.threads([&](const thread_idx& t) { a.store(t.x, in.load(base + t.x)); });
    if (p.barrier) ctx.sync();
    ctx.threads(
        [&](const thread_idx& t) { out.store(base + t.x, a.load((t.x + n_threads - 1) % n_threads)); });
  }
};

std::vector<float> iota_floats(int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
  return v;
}

TEST(Simulator, ReadBeforeBarrierSeesPoisonAndIsAttributed) {
  memory m;
  auto in = m.upload("in", iota_floats(2 * n_threads));
  auto out = m.alloc<float>("out", 2 * n_threads, fill::scratch);
  launch(m, neighbour_kernel{}, {in, out, false});
  // Every thread reads a value another thread wrote in the same epoch: 64 races per block.
  EXPECT_EQ(m.log.races, 2 * n_threads);
  EXPECT_EQ(m.log.uninitialized_reads, 0);
  const sim_hazard& h = m.log.hazards.at(0);
  EXPECT_EQ(h.kind, hazard_kind::read_after_write);
  EXPECT_EQ(h.buffer, "shared:a");
  EXPECT_EQ(h.index, n_threads - 1);  // thread 0 reads a[63], written by thread 63
  EXPECT_EQ(h.block[0], 0);
  EXPECT_EQ(h.thread[0], 0);
  EXPECT_EQ(h.other_thread[0], n_threads - 1);
  for (float v : m.download(out)) EXPECT_TRUE(std::isnan(v)) << "a racy read must see poison";
}

TEST(Simulator, ReadAfterBarrierSeesTheValue) {
  memory m;
  const auto src = iota_floats(2 * n_threads);
  auto in = m.upload("in", src);
  auto out = m.alloc<float>("out", 2 * n_threads, fill::scratch);
  launch(m, neighbour_kernel{}, {in, out, true});
  EXPECT_EQ(m.log.races + m.log.uninitialized_reads + m.log.oob_count + m.log.misuse_count, 0);
  const auto got = m.download(out);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < n_threads; ++t)
      EXPECT_EQ(got[b * n_threads + t], src[b * n_threads + (t + n_threads - 1) % n_threads]);
}

// Partial sums in shared memory, then thread 0 adds them up: `barrier` false plants the classic
// missing barrier of a block reduction.
struct reduce_kernel : tile_kernel<1> {
  using params = barrier_params;
  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const auto in = ctx.global(p.in);
    const auto out = ctx.global(p.out);
    const auto part = ctx.shared(s.tile, "partial");
    ctx.threads([&](const thread_idx& t) { part.store(t.x, 2.0f * in.load(t.x)); });
    if (p.barrier) ctx.sync();
    ctx.threads([&](const thread_idx& t) {
      if (t.x != 0) return;
      float sum = 0;
      for (int i = 0; i < n_threads; ++i) sum += part.load(i);
      out.store(0, sum);
    });
  }
};

TEST(Simulator, MissingBarrierInReductionIsCaught) {
  memory m;
  auto in = m.upload("in", iota_floats(n_threads));
  auto out = m.alloc<float>("out", 1, fill::scratch);
  launch(m, reduce_kernel{}, {in, out, false});
  EXPECT_EQ(m.log.races, n_threads - 1);  // partials 1..63 were written by other threads
  const sim_hazard& h = m.log.hazards.at(0);
  EXPECT_EQ(h.kind, hazard_kind::read_after_write);
  EXPECT_EQ(h.buffer, "shared:partial");
  EXPECT_EQ(h.index, 1);
  EXPECT_EQ(h.thread[0], 0);
  EXPECT_EQ(h.other_thread[0], 1);
  EXPECT_TRUE(std::isnan(m.download(out)[0]));

  memory ok;
  auto in2 = ok.upload("in", iota_floats(n_threads));
  auto out2 = ok.alloc<float>("out", 1, fill::scratch);
  launch(ok, reduce_kernel{}, {in2, out2, true});
  EXPECT_EQ(ok.log.races, 0);
  EXPECT_EQ(ok.download(out2)[0], n_threads * (n_threads + 1));
}

// Two rounds through one shared tile; `barrier` false drops the barrier that protects the tile
// from being overwritten while other threads still read it (a write-after-read race).
struct rounds_kernel : tile_kernel<1> {
  using params = barrier_params;
  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const auto in = ctx.global(p.in);
    const auto out = ctx.global(p.out);
    const auto tile = ctx.shared(s.tile, "tile");
    auto acc = ctx.template registers<fvec<1>>();
    ctx.threads([&](const thread_idx& t) { acc[t][0] = 0; });
    for (int round = 0; round < 2; ++round) {
      ctx.threads([&](const thread_idx& t) { tile.store(t.x, in.load(round * n_threads + t.x)); });
      ctx.sync();
      ctx.threads([&](const thread_idx& t) { acc[t][0] += tile.load(n_threads - 1 - t.x); });
      if (p.barrier) ctx.sync();
    }
    ctx.threads([&](const thread_idx& t) { out.store(t.x, acc[t][0]); });
  }
};

TEST(Simulator, MissingBarrierBeforeOverwriteIsCaught) {
  memory m;
  auto in = m.upload("in", iota_floats(2 * n_threads));
  auto out = m.alloc<float>("out", n_threads, fill::scratch);
  launch(m, rounds_kernel{}, {in, out, false});
  EXPECT_EQ(m.log.races, n_threads);
  const sim_hazard& h = m.log.hazards.at(0);
  EXPECT_EQ(h.kind, hazard_kind::write_after_read);
  EXPECT_EQ(h.buffer, "shared:tile");
  EXPECT_EQ(h.index, 0);
  EXPECT_EQ(h.thread[0], 0);                    // thread 0 overwrites tile[0] ...
  EXPECT_EQ(h.other_thread[0], n_threads - 1);  // ... which thread 63 read in the same epoch

  memory ok;
  auto in2 = ok.upload("in", iota_floats(2 * n_threads));
  auto out2 = ok.alloc<float>("out", n_threads, fill::scratch);
  launch(ok, rounds_kernel{}, {in2, out2, true});
  EXPECT_EQ(ok.log.races, 0);
  EXPECT_EQ(ok.download(out2)[0], 64.0f + 128.0f);
}

// Every thread reads tile[0]; then, without a barrier, the LAST reader overwrites it. The write
// races the other threads' reads: a tracker that kept only the latest reader would see the writer's
// own read and miss it.
struct shared_readers_kernel : tile_kernel<1> {
  using params = barrier_params;
  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const auto in = ctx.global(p.in);
    const auto out = ctx.global(p.out);
    const auto tile = ctx.shared(s.tile, "tile");
    ctx.threads([&](const thread_idx& t) {
      if (t.x == 0) tile.store(0, in.load(0));
    });
    ctx.sync();
    ctx.threads([&](const thread_idx& t) { out.store(t.x, tile.load(0)); });
    if (p.barrier) ctx.sync();
    ctx.threads([&](const thread_idx& t) {
      if (t.x == n_threads - 1) tile.store(0, 2.0f);
    });
  }
};

TEST(Simulator, WriteAfterSeveralReadersIsCaught) {
  memory m;
  auto in = m.upload("in", iota_floats(1));
  auto out = m.alloc<float>("out", n_threads, fill::scratch);
  launch(m, shared_readers_kernel{}, {in, out, false});
  ASSERT_EQ(m.log.races, 1);
  const sim_hazard& h = m.log.hazards.at(0);
  EXPECT_EQ(h.kind, hazard_kind::write_after_read);
  EXPECT_EQ(h.thread[0], n_threads - 1);
  EXPECT_EQ(h.other_thread[0], -2);  // several threads read it

  memory ok;
  auto in2 = ok.upload("in", iota_floats(1));
  auto out2 = ok.alloc<float>("out", n_threads, fill::scratch);
  launch(ok, shared_readers_kernel{}, {in2, out2, true});
  EXPECT_EQ(ok.log.races, 0);
}

TEST(Simulator, IsDeterministic) {
  auto run = [] {
    memory m;
    auto in = m.upload("in", iota_floats(2 * n_threads));
    auto out = m.alloc<float>("out", 2 * n_threads, fill::scratch);
    launch(m, neighbour_kernel{}, {in, out, false});
    return m.log.describe() + std::to_string(m.at(out.id).stats.bytes_written);
  };
  EXPECT_EQ(run(), run());
}

}  // namespace
}  // namespace headroom::sim
