// How many q and KV elements a layer's inputs may hold, per target (kernels/inputs.hpp input_cap):
// the simulator refuses above 2^26 with its message, the engine target builds up to 2^28 (q of
// bench_gpu_prefill's 4x4096 at 64 heads of 128, K of bench_gpu_decode's 64x4096 at 8 kv heads)
// and refuses above, naming the layer and the count. Deferred values keep these runs to their
// sizes: no q, K or V is allocated here.
#include <gtest/gtest.h>

#include <string>

#include "core/check/executor.hpp"
#include "core/util/error.hpp"
#include "kernels/inputs.hpp"
#include "kernels/numeric.hpp"

namespace headroom {
namespace {

// bench_gpu_prefill's layer at TP 1: 64 query heads, 8 kv heads, head size 128.
rank_layer bench_layer() {
  rank_layer l;
  l.name = "model.layers.3.self_attn.attn", l.num_heads = 64, l.num_kv_heads = 8, l.head_size = 128;
  return l;
}

batch prefill(int64_t requests, int64_t len) {
  batch b;
  b.seq_lens.assign(static_cast<std::size_t>(requests), len);
  b.query_lens.assign(static_cast<std::size_t>(requests), len);
  return b;
}

// The inputs' sizes under `cap`, values deferred.
attention_inputs<bf16> sized(const batch& b, const input_cap& cap) {
  return make_attention_inputs<bf16>(bench_layer(), b, 16, 5, kv_layout::packed, input_values::deferred, cap);
}

// The refusal of `b` under `cap`: field, value and reason.
input_error refusal(const batch& b, const input_cap& cap, input_values values = input_values::deferred) {
  try {
    make_attention_inputs<bf16>(bench_layer(), b, 16, 5, kv_layout::packed, values, cap);
  } catch (const input_error& e) {
    return e;
  }
  ADD_FAILURE() << "no refusal";
  return input_error("", "", "", "");
}

TEST(input_cap, each_target_has_its_cap) {
  EXPECT_EQ(input_cap_of(target_kind::sim).max_elems, int64_t{1} << 26);
  EXPECT_EQ(input_cap_of(target_kind::gpu).max_elems, int64_t{1} << 26);
  EXPECT_EQ(input_cap_of(target_kind::model).max_elems, int64_t{1} << 26);
  EXPECT_EQ(input_cap_of(target_kind::engine).max_elems, int64_t{1} << 28);
}

TEST(input_cap, the_simulator_refuses_above_2_26_with_its_message) {
  // 1x8192: q = 8192 x 64 x 128 = 2^26 exactly, the largest the simulator takes.
  EXPECT_EQ(sized(prefill(1, 8192), sim_input_cap).q_count, int64_t{1} << 26);
  // 1x8193: one token more. The default (host values, the simulator's own path) refuses it before
  // making any value.
  const input_error e = refusal(prefill(1, 8193), sim_input_cap, input_values::host);
  EXPECT_EQ(e.field(), "batch");
  EXPECT_EQ(e.value(), "67117056 q elements");
  EXPECT_EQ(e.why(), "layer model.layers.3.self_attn.attn: too large for the simulator (at most 2^26)");
  // bench_gpu_prefill's 4x4096 at TP 1 (2^27 q elements) and bench_gpu_decode's 64x4096 K (2^28).
  EXPECT_EQ(refusal(prefill(4, 4096), sim_input_cap).value(), "134217728 q elements");
  EXPECT_EQ(refusal(decode_batch(64, 4096), sim_input_cap).value(), "268435456 KV elements");
}

TEST(input_cap, the_engine_target_sizes_bench_shapes_past_2_26) {
  const input_cap engine = input_cap_of(target_kind::engine);
  for (const auto& [requests, len] : {std::pair{4, 4096}, {8, 2048}, {32, 512}}) {
    const auto in = sized(prefill(requests, len), engine);
    EXPECT_EQ(in.q_count, int64_t{1} << 27) << requests << "x" << len;
    EXPECT_EQ(in.kv_count, int64_t{1} << 24) << requests << "x" << len;
    EXPECT_FALSE(in.has_values);
    EXPECT_TRUE(in.q.empty() && in.kv_cache.empty());
  }
  for (const auto& [requests, len] : {std::pair{64, 4096}, {128, 2048}, {256, 1024}}) {
    const auto in = sized(decode_batch(requests, len), engine);
    EXPECT_EQ(in.kv_count, int64_t{1} << 28) << requests << "x" << len;  // exactly the cap
    EXPECT_EQ(in.q_count, requests * 64 * 128);
  }
  // The engine's step shape (a persistent block table, and the null block 0 beside the requests'
  // 32 x 256 blocks) takes the same caps: 2^27 + one block of K, past the simulator's.
  engine_step st;
  st.b = decode_batch(32, 4096);
  st.num_reqs_padded = 32, st.q_rows = 32, st.max_query_len = 1;
  for (int64_t i = 0; i <= 32; ++i) st.query_start.push_back(i);
  auto step = [&](const input_cap& cap) {
    return make_step_inputs<bf16>(bench_layer(), st, 32, 256, 16, 5, kv_layout::packed,
                                  input_values::deferred, cap);
  };
  EXPECT_EQ(step(engine).kv_count, (int64_t{1} << 27) + 16 * 8 * 128);
  EXPECT_THROW(step(sim_input_cap), input_error);
}

TEST(input_cap, the_engine_target_refuses_above_its_cap_naming_layer_and_count) {
  const input_cap engine = input_cap_of(target_kind::engine);
  const input_error q = refusal(prefill(8, 8192), engine);  // 2^29 q elements
  EXPECT_EQ(q.field(), "batch");
  EXPECT_EQ(q.value(), "536870912 q elements");
  EXPECT_EQ(
      q.why(),
      "layer model.layers.3.self_attn.attn: too large for the engine target's arena image (at most 2^28)");
  const input_error kv = refusal(decode_batch(64, 4112), engine);  // one page a request past 2^28
  EXPECT_EQ(kv.value(), "269484032 KV elements");
  EXPECT_NE(std::string(kv.what()).find("(at most 2^28)"), std::string::npos) << kv.what();
}

}  // namespace
}  // namespace headroom
