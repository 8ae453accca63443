// The GPU campaign path (label gpu; exits 77 without a device): inputs made on the device are the
// host's bytes (every dtype, both KV layouts, odd element counts); a batch's verdicts (guards,
// output against the device reference) agree with the single run's on the lane's decode and
// prefill cases; a fault in a batch is replayed case by case and lands on its own case.
// gpu.campaign_simworker (label cpu) runs the same tests against the simulated worker.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "kernels/input_values.hpp"
#include "kernels/inputs.hpp"
#include "kernels/numeric.hpp"
#include "targets/gpu/batch_case.hpp"
#include "targets/gpu/gpu_batcher.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "tests/gpu/gpu_cases.hpp"
#include "tests/gpu/gpu_test_main.hpp"

namespace headroom {
namespace {

using gpu_test::owned_case;

bool simulated_worker() { return std::getenv("HEADROOM_GPU_WORKER_BIN") != nullptr; }

gpu_executor& single() {
  static gpu_executor ex;  // checked + guarded, the lane's executor
  return ex;
}

template <class T>
std::vector<std::byte> bytes_of(const std::vector<T>& v) {
  std::vector<std::byte> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// The device's copy of buffer `id` of a campaign case, made there from its generator.
std::vector<std::byte> device_buffer(gpu::gpu_request rq, int32_t id, gpu::run_mode mode) {
  rq.modes = {mode};
  rq.download = id;
  const gpu::gpu_response resp = single().execute(rq);
  if (resp.runs.size() != 1 || resp.runs[0].faulted) return {};
  return resp.runs[0].output;
}

TEST(gpu_campaign, inputs_made_on_the_device_are_the_hosts_bytes) {
  const uint64_t cases = simulated_worker() ? 12 : 48;  // the simulated worker is slow
  int compared = 0;
  for (uint64_t i = 0; i < cases; ++i) {
    owned_case c = gpu_test::random_case(31, i, false);
    c.layout = i % 2 ? kv_layout::packed : kv_layout::separate;
    const gpu::batch_case bc = make_batch_case(c.request());
    const auto& bufs = bc.rq.buffers;
    auto id_of = [&](const char* name) {
      for (std::size_t k = 0; k < bufs.size(); ++k)
        if (bufs[k].name == name) return static_cast<int32_t>(k);
      return int32_t{-1};
    };
    auto check = [&]<class T>() {
      const auto host = make_attention_inputs<T>(c.layer, c.b, c.block_size, c.seed, c.layout);
      std::vector<std::pair<const char*, std::vector<std::byte>>> want = {{"q", bytes_of(host.q)}};
      if (c.layout == kv_layout::packed)
        want.push_back({"kv_cache", bytes_of(host.kv_cache)});
      else
        want.insert(want.end(), {{"k_cache", bytes_of(host.k_cache)}, {"v_cache", bytes_of(host.v_cache)}});
      for (const auto& [name, bytes] : want) {
        const int32_t id = id_of(name);
        ASSERT_GE(id, 0) << name;
        EXPECT_TRUE(bufs[static_cast<std::size_t>(id)].data.empty()) << name << ": travelled as bytes";
        EXPECT_NE(bufs[static_cast<std::size_t>(id)].gen, gpu::value_gen::none) << name;
        for (auto mode : {gpu::run_mode::plain, gpu::run_mode::guarded}) {
          EXPECT_EQ(device_buffer(bc.rq, id, mode), bytes)
              << c.describe() << " " << name << " " << to_string(c.dt) << " " << gpu::to_string(mode);
          ++compared;
        }
      }
    };
    if (c.dt == dtype::fp32)
      check.template operator()<float>();
    else if (c.dt == dtype::bf16)
      check.template operator()<bf16>();
    else
      check.template operator()<fp16>();
  }
  std::printf("%d buffers of attention cases compared\n", compared / 2);
  EXPECT_GE(compared, static_cast<int>(cases) * 4);
  // Odd lengths and every element type, as extra buffers of a planted request (the kernel does not
  // touch them): a stream of 1001 values, and a packed cache of 7 rows of 2 x 3 values.
  for (auto type : {gpu::elem_type::f32, gpu::elem_type::bf16, gpu::elem_type::fp16}) {
    const int64_t eb = type == gpu::elem_type::f32 ? 4 : 2;
    gpu::gpu_request rq = gpu_test::planted_request({});
    gpu::wire_buffer stream{"stream", eb, 1001, false, {}};
    stream.gen = gpu::value_gen::stream, stream.gen_type = type, stream.key = stream_key(99, value_stream::q);
    gpu::wire_buffer packed{"packed", eb, 7 * 2 * 3, false, {}};
    packed.gen = gpu::value_gen::packed_kv, packed.gen_type = type, packed.row = 3;
    packed.key = stream_key(99, value_stream::k), packed.key_v = stream_key(99, value_stream::v);
    rq.buffers.push_back(stream), rq.buffers.push_back(packed);
    auto expect = [&]<class T>() {
      std::vector<T> s1(1001), p1(42);
      for (int64_t e = 0; e < 1001; ++e) s1[static_cast<std::size_t>(e)] = input_value<T>(stream.key, e);
      for (int64_t r = 0; r < 7; ++r)  // K's row r, then V's row r
        for (int64_t j = 0; j < 3; ++j) {
          p1[static_cast<std::size_t>(r * 6 + j)] = input_value<T>(packed.key, r * 3 + j);
          p1[static_cast<std::size_t>(r * 6 + 3 + j)] = input_value<T>(packed.key_v, r * 3 + j);
        }
      for (auto mode : {gpu::run_mode::plain, gpu::run_mode::guarded}) {
        EXPECT_EQ(device_buffer(rq, 2, mode), bytes_of(s1)) << eb << "-byte stream, " << gpu::to_string(mode);
        EXPECT_EQ(device_buffer(rq, 3, mode), bytes_of(p1)) << eb << "-byte packed, " << gpu::to_string(mode);
      }
    };
    if (type == gpu::elem_type::f32)
      expect.template operator()<float>();
    else if (type == gpu::elem_type::bf16)
      expect.template operator()<bf16>();
    else
      expect.template operator()<fp16>();
  }
}

// Many job threads on one batcher: the campaign's verdicts against the single run's, per case.
TEST(gpu_campaign, batch_verdicts_agree_with_the_single_run) {
  batcher_options bo;
  bo.max_wait_us = 2000;
  auto b = std::make_shared<gpu_batcher>(bo);
  std::vector<owned_case> cases;
  const uint64_t n = simulated_worker() ? 24 : 48;  // of each kind; the simulated worker is slow
  for (uint64_t i = 0; i < n; ++i) cases.push_back(gpu_test::random_case(41, i, i % 2 == 0));
  for (uint64_t i = 0; i < n; ++i) cases.push_back(gpu_test::random_prefill_case(43, i, i % 3 == 0));
  std::vector<observation> batched(cases.size());
  constexpr int threads = 8;
  {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        gpu_campaign_executor ex(b);
        for (std::size_t k = static_cast<std::size_t>(t); k < cases.size(); k += threads)
          batched[k] = ex.run(cases[k].request());
      });
    for (auto& t : pool) t.join();
  }
  int mismatching = 0, corrupted = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const owned_case& c = cases[k];
    const observation s = single().run(c.request());
    const observation& g = batched[k];
    EXPECT_EQ(g.faulted, s.faulted) << c.describe() << ": " << g.fault_detail << " / " << s.fault_detail;
    EXPECT_EQ(g.output_checked, s.output_checked) << c.describe();
    EXPECT_EQ(g.output_mismatch, s.output_mismatch)
        << c.describe() << ": batch " << g.mismatch_detail << " / single " << s.mismatch_detail;
    // Guards: the single run's guarded mode. The simulated worker has none: its batches report the
    // writes out of bounds instead, which the single run's checked mode lists.
    const bool single_saw = simulated_worker() ? std::any_of(s.oob.begin(), s.oob.end(),
                                                             [](const access_record& a) { return a.write; })
                                               : s.guard_corrupted;
    EXPECT_EQ(g.guard_corrupted, single_saw)
        << c.describe() << ": " << g.guard_detail << " / " << s.guard_detail;
    mismatching += g.output_mismatch ? 1 : 0;
    corrupted += g.guard_corrupted ? 1 : 0;
  }
  const batcher_stats st = b->stats();
  std::printf("%lld runs in %lld batches; %d with a mismatching output, %d with corrupted bands\n",
              static_cast<long long>(st.cases), static_cast<long long>(st.batches), mismatching, corrupted);
  EXPECT_EQ(st.cases, static_cast<int64_t>(cases.size()));
  EXPECT_LT(st.batches, st.cases);  // the threads' runs did share batches
  EXPECT_GE(corrupted, static_cast<int>(n) / 5);
  EXPECT_GE(mismatching, 3);
}

TEST(gpu_campaign, a_fault_in_a_batch_lands_on_its_case) {
  gpu_test::planted_case p;
  p.n_store = 256, p.offset = int64_t{1} << 40;  // 4 TiB past the buffer: an illegal address
  gpu::batch_case faulting;
  faulting.rq = gpu_test::planted_request(p);
  batcher_options bo;
  bo.max_wait_us = 1'000'000;  // the batch leaves once all three clients wait: one batch of three
  bo.workers = 1;
  gpu_batcher b(bo);
  const owned_case c1 = gpu_test::random_case(5, 1, false), c2 = gpu_test::random_case(5, 2, false);
  std::vector<batch_outcome> out(3);
  {
    std::vector<std::thread> pool;
    for (int t = 0; t < 3; ++t) b.add_client();
    pool.emplace_back([&] { out[0] = b.run(make_batch_case(c1.request())); });
    pool.emplace_back([&] { out[1] = b.run(faulting); });
    pool.emplace_back([&] { out[2] = b.run(make_batch_case(c2.request())); });
    for (auto& t : pool) t.join();
  }
  EXPECT_FALSE(out[0].verdict.faulted) << out[0].verdict.fault;
  EXPECT_TRUE(out[1].verdict.faulted);
  std::printf("fault reported: %s\n", out[1].verdict.fault.c_str());
  EXPECT_FALSE(out[2].verdict.faulted) << out[2].verdict.fault;
  EXPECT_TRUE(out[0].verdict.compared && out[2].verdict.compared);
  EXPECT_EQ(out[0].verdict.bad + out[2].verdict.bad, 0);
  const batcher_stats st = b.stats();
  EXPECT_EQ(st.replayed, 3);
  EXPECT_EQ(st.faults, 1);
  EXPECT_GE(st.worker_starts, 2);
}

}  // namespace
}  // namespace headroom
