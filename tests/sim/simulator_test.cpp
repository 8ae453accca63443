// The simulator catches planted bugs with exact attribution: an off-by-one store past a global
// buffer (buffer, index, extent, block, thread), uninitialized reads of scratch and of shared
// memory, misuse of the context; lane sums; the violation cap. Barriers: test_sim_barriers.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/sim/launch.hpp"
#include "core/sim/native_context.hpp"
#include "tests/sim/sim_test_support.hpp"

namespace headroom::sim {
namespace {

// Each thread stores one element; `shift` = 1 plants the off-by-one.
struct store_kernel {
  struct params {
    buffer_ref<float> out;
    int64_t shift;
  };
  struct shared_storage {
    int unused;
  };
  static launch_dim grid(const params&) { return {3, 1, 1}; }
  static launch_dim block(const params&) { return {32, 1, 1}; }
  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage&) const {
    const auto out = ctx.global(p.out);
    const int64_t bx = ctx.block_idx().x;
    ctx.threads([&](const thread_idx& t) { out.store(bx * 32 + t.x + p.shift, 1.0f); });
  }
};

TEST(Simulator, OffByOneStoreIsAttributed) {
  memory m;
  auto out = m.alloc<float>("out", 96, fill::scratch);
  launch(m, store_kernel{}, {out, 1});
  ASSERT_EQ(m.log.oob_count, 1);
  const sim_access& a = m.log.oob.at(0);
  EXPECT_EQ(a.buffer, "out");
  EXPECT_TRUE(a.write);
  EXPECT_EQ(a.index, 96);
  EXPECT_EQ(a.extent, 96);
  EXPECT_EQ((std::vector<int64_t>{a.block[0], a.block[1], a.block[2]}), (std::vector<int64_t>{2, 0, 0}));
  EXPECT_EQ((std::vector<int64_t>{a.thread[0], a.thread[1], a.thread[2]}), (std::vector<int64_t>{31, 0, 0}));
  EXPECT_EQ(m.at(out.id).stats.touched, 97);
  EXPECT_EQ(m.at(out.id).stats.bytes_written, 95 * 4);
}

TEST(Simulator, CorrectStoreIsClean) {
  memory m;
  auto out = m.alloc<float>("out", 96, fill::scratch);
  launch(m, store_kernel{}, {out, 0});
  EXPECT_EQ(m.log.oob_count, 0);
  EXPECT_EQ(m.at(out.id).stats.touched, 96);
  EXPECT_EQ(m.at(out.id).stats.bytes_written, 96 * 4);
}

// Stores the first 32 elements of a 64-element buffer, then reads 32 elements starting at 48: the
// reads run 16 past the end, the stores stay inside (a merge reading partial rows no kernel wrote).
struct read_past_kernel {
  struct params {
    buffer_ref<float> buf;
  };
  struct shared_storage {
    int unused;
  };
  static launch_dim grid(const params&) { return {1, 1, 1}; }
  static launch_dim block(const params&) { return {32, 1, 1}; }
  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage&) const {
    const auto buf = ctx.global(p.buf);
    ctx.threads([&](const thread_idx& t) { buf.store(t.x, 1.0f); });
    ctx.threads([&](const thread_idx& t) { (void)buf.load(48 + t.x); });
  }
};

TEST(Simulator, WrittenExtentCountsStoresAlone) {
  memory m;
  auto buf = m.alloc<float>("buf", 64, fill::data);
  launch(m, read_past_kernel{}, {buf});
  EXPECT_EQ(m.log.oob_count, 16);
  EXPECT_EQ(m.at(buf.id).stats.touched, 80);     // the last read, element 79
  EXPECT_EQ(m.at(buf.id).stats.written_to, 32);  // the last store, element 31
  // Stores past the end count in both.
  memory m2;
  auto out = m2.alloc<float>("out", 96, fill::scratch);
  launch(m2, store_kernel{}, {out, 1});
  EXPECT_EQ(m2.at(out.id).stats.written_to, 97);
}

// Reads scratch nothing wrote, and shared memory only an earlier block wrote.
struct uninit_kernel : tile_kernel<2> {
  struct params {
    buffer_ref<float> scratch;
    buffer_ref<float> out;
    bool write_tile = true;  // false: block 0 does not write the tile either
  };
  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage& s) const {
    const auto scratch = ctx.global(p.scratch);
    const auto out = ctx.global(p.out);
    const auto a = ctx.shared(s.tile, "a");
    const int64_t bx = ctx.block_idx().x;
    ctx.threads([&](const thread_idx& t) {
      if (bx == 0 && p.write_tile) a.store(t.x, 1.0f);  // block 1 never writes the tile
      if (t.x < 2) scratch.store(t.x, 3.0f);            // elements 2.. stay unwritten
    });
    ctx.sync();
    ctx.threads([&](const thread_idx& t) {
      if (t.x != 5) return;
      out.store(bx, a.load(7) + scratch.load(1 + bx * 9));  // block 1: a[7] and scratch[10]
    });
  }
};

TEST(Simulator, UninitializedReadsAreFlagged) {
  memory m;
  auto scratch = m.alloc<float>("scratch", 16, fill::scratch);
  auto out = m.alloc<float>("out", 2, fill::scratch);
  launch(m, uninit_kernel{}, {scratch, out});
  EXPECT_EQ(m.log.uninitialized_reads, 2);
  EXPECT_EQ(m.log.races, 0);
  ASSERT_EQ(m.log.hazards.size(), 2u);
  EXPECT_EQ(m.log.hazards[0].buffer, "shared:a");
  EXPECT_EQ(m.log.hazards[0].index, 7);
  EXPECT_EQ(m.log.hazards[0].block[0], 1);
  EXPECT_EQ(m.log.hazards[0].thread[0], 5);
  EXPECT_EQ(m.log.hazards[1].buffer, "scratch");
  EXPECT_EQ(m.log.hazards[1].index, 10);
  const auto got = m.download(out);
  EXPECT_EQ(got[0], 4.0f);
  EXPECT_TRUE(std::isnan(got[1]));
}

// The simulator keeps shared memory across launches (no fill per launch): what an earlier launch
// wrote must still read as never written.
TEST(Simulator, SharedMemoryOfAnEarlierLaunchReadsAsUninitialized) {
  memory m;
  auto scratch = m.alloc<float>("scratch", 16, fill::scratch);
  auto out = m.alloc<float>("out", 2, fill::scratch);
  launch(m, uninit_kernel{}, {scratch, out, true});
  const auto before = m.log.hazards.size();
  launch(m, uninit_kernel{}, {scratch, out, false});
  ASSERT_GE(m.log.hazards.size(), before + 1);
  EXPECT_EQ(m.log.hazards[before].buffer, "shared:a");  // block 0's a[7]: written by launch 1 only
  EXPECT_EQ(m.log.hazards[before].block[0], 0);
  EXPECT_TRUE(std::isnan(m.download(out)[0]));
}

// Misuse: a barrier inside thread code, a lane group wider than a warp, an unknown buffer.
struct misuse_kernel {
  struct params {
    buffer_ref<float> out;
  };
  struct shared_storage {
    int unused;
  };
  static launch_dim grid(const params&) { return {1, 1, 1}; }
  static launch_dim block(const params&) { return {64, 1, 1}; }
  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage&) const {
    ctx.threads([&](const thread_idx& t) {
      if (t.x == 0) ctx.sync();
    });
    auto r = ctx.template registers<fvec<1>>();
    ctx.lane_sum(r, 64);
    buffer_ref<float> stray = p.out;
    stray.id = 99;
    ctx.global(stray).store(0, 1.0f);
  }
};

TEST(Simulator, MisuseIsRecordedNotFatal) {
  memory m;
  auto out = m.alloc<float>("out", 4, fill::scratch);
  launch(m, misuse_kernel{}, {out});
  EXPECT_EQ(m.log.misuse_count, 3);
  EXPECT_EQ(m.log.oob_count, 1);  // the stray view has extent 0
}

// lane_sum adds within groups and matches the native context bit for bit.
struct lanes_kernel {
  struct params {
    buffer_ref<float> out;
  };
  struct shared_storage {
    int unused;
  };
  static launch_dim grid(const params&) { return {1, 1, 1}; }
  static launch_dim block(const params&) { return {8, 4, 1}; }
  template <class Ctx>
  void operator()(Ctx& ctx, const params& p, shared_storage&) const {
    auto r = ctx.template registers<fvec<2>>();
    ctx.threads([&](const thread_idx& t) {
      r[t][0] = static_cast<float>(t.linear);
      r[t][1] = 0.1f * static_cast<float>(t.x);
    });
    ctx.lane_sum(r, 8);
    const auto out = ctx.global(p.out);
    ctx.threads([&](const thread_idx& t) {
      out.store(2 * t.linear, r[t][0]);
      out.store(2 * t.linear + 1, r[t][1]);
    });
  }
};

TEST(Simulator, LaneSumMatchesNative) {
  memory m;
  auto out = m.alloc<float>("out", 64, fill::scratch);
  launch(m, lanes_kernel{}, {out});
  const auto sim = m.download(out);
  EXPECT_EQ(sim[0], 28.0f);      // 0 + ... + 7
  EXPECT_EQ(sim[2 * 8], 92.0f);  // 8 + ... + 15
  launch_native(lanes_kernel{}, {out});
  EXPECT_EQ(m.download(out), sim);
}

TEST(Simulator, TooManyViolationsAbortBetweenBlocks) {
  memory m;
  auto out = m.alloc<float>("out", 1, fill::scratch);
  launch_options o;
  o.max_violations = 40;
  const auto r = launch(m, store_kernel{}, {out, 0}, o);
  EXPECT_TRUE(r.aborted);
  EXPECT_EQ(r.blocks_run, 2);  // 31 + 32 violations: stop before the third block
  EXPECT_EQ(m.log.oob_count, 63);
}

}  // namespace
}  // namespace headroom::sim
