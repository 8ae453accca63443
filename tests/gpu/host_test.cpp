// The GPU lane's host side, with or without a device (label cpu): the worker messages round-trip,
// device detection never throws, a missing worker executable means no device, without a device
// the gpu target refuses cleanly (input_error) instead of crashing, and the guarded arena's layout.
#include <gtest/gtest.h>

#include "core/util/error.hpp"
#include "targets/gpu/memory/arena_layout.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "targets/gpu/request.hpp"
#include <cstdlib>

#include "targets/gpu/worker/verdict_split.hpp"
#include "targets/gpu/worker/worker_process.hpp"
#include "tests/gpu/gpu_cases.hpp"

namespace headroom {
namespace {

TEST(gpu_wire, request_round_trips) {
  const auto c = gpu_test::random_case(7, 3, true);
  gpu::gpu_request rq = make_gpu_request(c.request(), nullptr);
  rq.modes = {gpu::run_mode::checked, gpu::run_mode::plain};
  const gpu::gpu_request back = gpu::decode_request(gpu::encode(rq));
  EXPECT_EQ(back.fam, rq.fam);
  EXPECT_EQ(back.params, rq.params);
  EXPECT_EQ(back.modes, rq.modes);
  ASSERT_EQ(back.buffers.size(), rq.buffers.size());
  for (std::size_t i = 0; i < rq.buffers.size(); ++i) {
    EXPECT_EQ(back.buffers[i].name, rq.buffers[i].name);
    EXPECT_EQ(back.buffers[i].extent, rq.buffers[i].extent);
    EXPECT_EQ(back.buffers[i].scratch, rq.buffers[i].scratch);
    EXPECT_EQ(back.buffers[i].data, rq.buffers[i].data);
  }
  EXPECT_GE(rq.download, 0);
  EXPECT_EQ(rq.buffers[static_cast<std::size_t>(rq.download)].name, "output");
}

TEST(gpu_wire, response_round_trips_and_truncation_throws) {
  gpu::gpu_response r;
  auto& run = r.runs.emplace_back();
  run.mode = gpu::run_mode::checked;
  run.touched = {5, -1, 7};
  run.oob_count = 3;
  run.oob.push_back({});
  run.oob.back().index = 99;
  run.guards.push_back({2, 1, 16, 4, 40});
  run.output = std::vector<std::byte>(10, std::byte{1});
  r.worker_exiting = true;
  const auto m = gpu::encode(r);
  const auto back = gpu::decode_response(m);
  ASSERT_EQ(back.runs.size(), 1u);
  EXPECT_EQ(back.runs[0].touched, run.touched);
  EXPECT_EQ(back.runs[0].oob[0].index, 99);
  EXPECT_EQ(back.runs[0].guards[0].last, 40);
  EXPECT_TRUE(back.worker_exiting);
  auto cut = m;
  cut.resize(m.size() - 3);
  EXPECT_THROW(gpu::decode_response(cut), std::runtime_error);
}

TEST(gpu_device, detection_never_throws_and_no_device_is_an_input_error) {
  const int n = gpu_device_count();  // no driver / no CUDA build: 0, never an exception
  EXPECT_GE(n, 0);
  if (n == 0) {
    EXPECT_THROW(make_gpu_executor(), input_error);
  } else {
    EXPECT_FALSE(gpu::find_worker().empty());
  }
}

TEST(gpu_device, a_missing_worker_is_no_device_not_a_crash) {
  const char* old = std::getenv(gpu::worker_path_env);
  const std::string saved = old ? old : "";
  ::setenv(gpu::worker_path_env, "/nonexistent/headroom_gpu_worker", 1);
  {
    gpu::worker_process w;
    EXPECT_EQ(w.hello().device_count, 0);
    EXPECT_NE(w.hello().error.find("no GPU worker executable"), std::string::npos) << w.hello().error;
    const gpu::call_result r = w.call(gpu::gpu_request{});
    EXPECT_TRUE(r.died);
  }
  if (old)
    ::setenv(gpu::worker_path_env, saved.c_str(), 1);
  else
    ::unsetenv(gpu::worker_path_env);
}

// Every payload 256-aligned, behind a before band of at least min_band; an input's after band is
// min_band, a writable buffer's max(min_band, 4x), its canary part capped at max_band; slots in
// request order without overlap; the arena ends in a tail of 32x the largest writable buffer.
TEST(gpu_arena, layout_bands_caps_and_tail) {
  const auto buf = [](const char* name, int64_t elem, int64_t extent, bool scratch) {
    gpu::wire_buffer b{name, elem, extent, scratch, {}};
    if (!scratch) b.data.resize(static_cast<std::size_t>(elem * extent));
    return b;
  };
  const std::vector<gpu::wire_buffer> bufs{buf("q", 2, 1000, false), buf("out", 4, 1001, true),
                                           buf("plan", 4, 1 << 20, true), buf("lens", 4, 3, false)};
  std::vector<const gpu::wire_buffer*> ptrs;
  for (const auto& b : bufs) ptrs.push_back(&b);
  const gpu::guard_options g;
  int64_t bytes = 0;
  const auto slots = gpu::arena_layout(ptrs, g, bytes);
  ASSERT_EQ(slots.size(), bufs.size());
  int64_t prev_after = 0;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const auto& s = slots[i];
    const int64_t payload = bufs[i].elem_bytes * bufs[i].extent;
    EXPECT_EQ(s.before, prev_after) << i;
    EXPECT_EQ(s.start % gpu::payload_alignment, 0) << i;
    EXPECT_GE(s.start - s.before, g.min_band) << i;
    EXPECT_EQ(s.end - s.start, payload) << i;
    const int64_t after = bufs[i].scratch ? std::max(g.min_band, g.after_factor * payload) : g.min_band;
    EXPECT_EQ(s.after - s.end, after) << i;
    EXPECT_EQ(s.checked - s.end, std::min(after, g.max_band)) << i;
    prev_after = s.after;
  }
  EXPECT_EQ(slots[2].checked - slots[2].end, g.max_band);  // 16 MiB of slack, 1 MiB of canaries
  const int64_t tail = std::min(g.max_tail, g.tail_factor * (int64_t{4} << 20));
  EXPECT_GE(bytes, prev_after + tail);
  EXPECT_LT(bytes, prev_after + tail + 16);
  EXPECT_EQ(bytes % 16, 0);
}

// The output check's work items (verdict_split.hpp), by hand: request 0 has 3 keys and 2 query
// tokens (positions 1 and 2), request 1 has 600 keys and 1 token (position 599): 1, 1 and 3
// chunks of 256 keys, per head.
// A described memory (what a GPU request is made from): sizes for every buffer, host bytes only for
// what the host writes, and the request carries exactly those bytes.
TEST(gpu_request, described_memory_holds_only_what_the_host_writes) {
  sim::memory m(sim::storage::described);
  const auto scratch = m.alloc<float>("tmp_s", 1000, sim::fill::scratch);
  const auto data = m.alloc<float>("q", 500, sim::fill::data);  // made on the device
  const auto table = m.upload<int32_t>("block_table", {7, 8, 9});
  const auto work = m.upload_prefix<int32_t>("request_indices", {1, 2}, 64);
  EXPECT_EQ(scratch.data, nullptr);
  EXPECT_EQ(scratch.extent, 1000);
  EXPECT_EQ(data.data, nullptr);
  ASSERT_NE(table.data, nullptr);
  EXPECT_EQ(table.data[2], 9);
  EXPECT_EQ(work.extent, 64);
  EXPECT_EQ(work.data[1], 2);
  EXPECT_EQ(m[3].host_prefix, 2);
  gpu::gpu_request rq;
  gpu::add_buffers(m, rq, {data.id});
  ASSERT_EQ(rq.buffers.size(), 4u);
  EXPECT_TRUE(rq.buffers[0].scratch);
  EXPECT_TRUE(rq.buffers[0].data.empty());
  EXPECT_TRUE(rq.buffers[1].data.empty());
  EXPECT_EQ(rq.buffers[2].data.size(), 12u);
  EXPECT_EQ(rq.buffers[3].data.size(), 8u);  // the prefix: two int32
  EXPECT_EQ(rq.buffers[3].extent, 64);
}

TEST(gpu_verdict_split, items_by_hand) {
  using gpu::split_verdict, gpu::verdict_items, gpu::verdict_split;
  const int32_t lens[] = {3, 600}, starts[] = {0, 2, 3};
  EXPECT_EQ(verdict_items(lens, starts, 2, 3, 2, 0), (std::vector<int64_t>{0, 2, 4, 10}));
  EXPECT_EQ(verdict_items(lens, starts, 2, 3, 2, 100), (std::vector<int64_t>{0, 2, 4, 6}));  // a window
  EXPECT_EQ(verdict_items(nullptr, nullptr, 2, 3, 2, 0), (std::vector<int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(verdict_items(lens, starts, 2, 3, 2, 0, 256, 9), (std::vector<int64_t>{0, 2, 4, 6}));  // too many
  EXPECT_EQ(verdict_items(lens, starts, 2, 3, 1, 0, 600), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(verdict_items(lens, starts, 2, 3, 1, 0, 599), (std::vector<int64_t>{0, 1, 2, 4}));
  // One decode token over 2^20 keys, 64 heads of 128: 256-key chunks would be 262,144 items of
  // 130 floats, over 64 MiB (129,055 items); 1,024-key chunks make 65,536.
  const int32_t long_len[] = {1 << 20}, one[] = {0, 1};
  const verdict_split v = split_verdict(long_len, one, 1, 1, 64, 128, 0);
  EXPECT_EQ(v.chunk, 1024);
  EXPECT_EQ(v.items, (std::vector<int64_t>{0, 65536}));
}

// Every key of a row lands in exactly one chunk, whether the device's row is as long as the host
// planned, shorter or longer (the last chunk takes the rest; chunks past the end are empty).
TEST(gpu_verdict_split, chunks_cover_every_key_once) {
  using gpu::chunk_range, gpu::key_range;
  for (int64_t first : {0, 5, 300})
    for (int64_t pos : {first - 1, first, first + 255, first + 256, first + 1000})
      for (int64_t n : {1, 2, 4, 9}) {
        std::vector<int> seen(static_cast<std::size_t>(pos - first + 1 > 0 ? pos - first + 1 : 0), 0);
        for (int64_t c = 0; c < n; ++c) {
          const key_range r = chunk_range(first, pos, c, n, 256);
          for (int64_t k = r.lo; k <= r.hi; ++k) {
            ASSERT_GE(k, first);
            ASSERT_LE(k, pos);
            ++seen[static_cast<std::size_t>(k - first)];
          }
        }
        for (int x : seen) EXPECT_EQ(x, 1) << first << " " << pos << " " << n;
      }
}

}  // namespace
}  // namespace headroom
