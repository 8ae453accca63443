// FA3 without an ahead-of-time schedule: a model of two window configs (Laguna XS.2) passes no
// scheduler_metadata, so every layer's mha_fwd call prepares its own metadata from its own geometry.
// The checker runs one such call per layer geometry on the target, with the metadata at the exact
// size mha_fwd allocates; the layouts are pinned by hand from FA3's rules (hopper/flash_api.cpp,
// mha_fwd: one prepare vector, one more with a dynamic split, one more with head swizzle, then the
// semaphore).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/check/check.hpp"
#include "tests/support/laguna.hpp"

namespace headroom {
namespace {

// The formulas' answers, with every FA3 plan a run is asked for kept beside its layer.
class fa3_recorder final : public executor {
 public:
  target_kind kind() const override { return target_kind::model; }
  observation run(const run_request& r) override {
    if (const auto* f = std::get_if<fa3_plan>(r.plan)) calls.emplace_back(r.layer->name, *f);
    return model_observation(*r.plan, *r.layer, *r.b, r.kv_dtype);
  }
  std::vector<std::pair<std::string, fa3_plan>> calls;
};

check_options fa3_options(mutant_set mutants = {}) {
  check_options o;
  o.backends = {backend::fa3};
  o.mutants = std::move(mutants);
  return o;
}

bool decode_of(const fa3_plan& f, int64_t batch) {
  return f.sched.batch == batch && f.sched_call.max_query_len == 1 &&
         f.seq_lens.size() == static_cast<std::size_t>(batch);
}

// Laguna XS.2: full layers (48 query heads, no window) and sliding ones (64, window 512), 8 kv heads,
// head size 128, in four attention groups (the full layers; the sliding ones in three KV-cache groups,
// led by layers 1, 2 and 3). Only a group's first layer of each geometry runs; each call is its own.
TEST(Fa3InCall, EachLayerGeometryPreparesItsOwnCall) {
  fa3_recorder rec;
  const report r = run_check(testing::laguna_xs2(), fa3_options(), rec);
  EXPECT_TRUE(r.ok);
  ASSERT_FALSE(rec.calls.empty());
  std::set<std::string> layers;
  for (const auto& [name, f] : rec.calls) {
    layers.insert(name);
    EXPECT_TRUE(f.in_call) << name;
    const bool full = name == "model.layers.0.self_attn.attn";
    EXPECT_EQ(f.sched_call.q_heads, full ? 48 : 64) << name;
    EXPECT_EQ(f.sched_call.kv_heads, 8);
    EXPECT_EQ(f.sched_call.window, full ? 0 : 512) << name;
    EXPECT_EQ(f.sched_call.q_heads, f.run_call.q_heads);
    EXPECT_EQ(f.sched.size(), f.run_size);
    EXPECT_EQ(f.buffers.front().name, "scheduler_metadata");
    EXPECT_EQ(f.buffers.front().capacity_bytes, 4 * f.sched.size());
  }
  const auto layer = [](int i) { return "model.layers." + std::to_string(i) + ".self_attn.attn"; };
  EXPECT_EQ(layers, (std::set<std::string>{layer(0), layer(1), layer(2), layer(3)}));
  // A decode batch of 8 under FULL graphs: vLLM passes num_splits 32, so the call splits dynamically;
  // causal (head size 128 keeps one-token decode causal) and local both swizzle heads: three vectors
  // of round_up(8, 4) = 8, and the semaphore: 25 entries, 100 bytes.
  const auto eight = std::find_if(rec.calls.begin(), rec.calls.end(), [](const auto& c) {
    return c.first == "model.layers.1.self_attn.attn" && decode_of(c.second, 8);
  });
  ASSERT_NE(eight, rec.calls.end());
  EXPECT_EQ(eight->second.run_splits, 32);
  EXPECT_EQ(eight->second.buffers.front().capacity_bytes, 100);
}

// The builder's query heads do not reach a call that prepares itself: model-wide-heads (48 query
// heads for the 64-head sliding layers) changes no call and finds nothing.
TEST(Fa3InCall, TheBuildersHeadsDoNotReachTheCall) {
  fa3_recorder fixed, mutant;
  run_check(testing::laguna_xs2(), fa3_options(), fixed);
  const report r = run_check(testing::laguna_xs2(), fa3_options({"model-wide-heads"}), mutant);
  EXPECT_TRUE(r.ok);
  ASSERT_EQ(fixed.calls.size(), mutant.calls.size());
  for (std::size_t i = 0; i < fixed.calls.size(); ++i) {
    EXPECT_EQ(fixed.calls[i].second.sched_call.q_heads, mutant.calls[i].second.sched_call.q_heads);
    EXPECT_EQ(fixed.calls[i].second.sched.size(), mutant.calls[i].second.sched.size());
  }
}

// FA3 serves head sizes up to 256 (mha_fwd raises above): Laguna with Gemma 4's full-layer head
// size 512 runs its sliding layers' calls only, and the report says which layer raises.
TEST(Fa3InCall, ALayerMhaFwdRaisesOnRunsNoCall) {
  model_geometry m = testing::laguna_xs2();
  for (auto& l : m.layers)
    if (l.kind == attn_kind::full) l.head_size = l.head_size_v = 512;
  fa3_recorder rec;
  const report r = run_check(m, fa3_options(), rec);
  ASSERT_FALSE(rec.calls.empty());
  for (const auto& [name, f] : rec.calls) EXPECT_EQ(f.sched_call.head_size, 128) << name;
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find(
               "FA3's mha_fwd raises on layer model.layers.0.self_attn.attn (head size 512: at most 256") !=
           std::string::npos;
  }));
}

// Without the hybrid KV-cache manager Laguna's layers share one attention group (grouped by heads:
// its 64-head sliding layers form one) whose full layers, given 64 heads here, differ from the
// sliding ones only by the window. Each geometry of a group runs its own call, and the sweep's
// 512-token prefill is one of them.
TEST(Fa3InCall, EveryGeometryOfAGroupRunsItsCall) {
  model_geometry m = testing::laguna_xs2();
  for (auto& l : m.layers) l.num_heads = 64;
  check_options o = fa3_options();
  o.hybrid = false;
  fa3_recorder rec;
  EXPECT_TRUE(run_check(m, o, rec).ok);
  std::set<int64_t> windows;
  bool prefill = false;
  for (const auto& [name, f] : rec.calls) {
    windows.insert(f.sched_call.window);
    prefill = prefill || (f.in_call && f.sched_call.max_query_len == 512);
  }
  EXPECT_EQ(windows, (std::set<int64_t>{0, 512}));
  EXPECT_TRUE(prefill);
}

// A FlashAttentionDiffKV layer (head size 192, v 128) prepares its call with its own v: Laguna's
// geometry at those sizes, blocks of 128, whose one-token decode stays under 128 packed rows (no TMA)
// and whose 512-token prefill reads the blocks through TMA on 128-key tiles.
TEST(Fa3InCall, ADiffKvLayerPreparesWithItsOwnV) {
  model_geometry m = testing::laguna_xs2();
  for (auto& l : m.layers) l.head_size = 192, l.head_size_v = 128;
  check_options o = fa3_options();
  o.block_size = 128;
  fa3_recorder rec;
  EXPECT_TRUE(run_check(m, o, rec).ok);
  ASSERT_FALSE(rec.calls.empty());
  bool tma = false;
  for (const auto& [name, f] : rec.calls) {
    EXPECT_EQ(fa3_head_size_v(f.sched_call), 128) << name;
    EXPECT_EQ(f.sched.size(), f.run_size) << name;
    tma = tma || fa3_paged_kv_tma(f.sched_call);
  }
  EXPECT_TRUE(tma);
}

// A model of one window config whose layers of head size 512 mha_fwd raises on: those layers' group
// runs no call and says so; the other layers are scheduled as before.
TEST(Fa3InCall, AScheduledGroupNotesALayerMhaFwdRaisesOn) {
  model_geometry one = testing::laguna_xs2();
  for (auto& l : one.layers) {
    l.kind = attn_kind::sliding, l.sliding_window = 512;
    if (l.num_heads == 48) l.head_size = l.head_size_v = 512;
  }
  fa3_recorder rec;
  const report r = run_check(one, fa3_options(), rec);
  ASSERT_FALSE(rec.calls.empty());
  for (const auto& [name, f] : rec.calls) EXPECT_EQ(f.run_call.head_size, 128) << name;
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("FA3's mha_fwd raises on layer model.layers.0.self_attn.attn (head size 512") !=
           std::string::npos;
  }));
}

// A model of one window config whose every layer is a FlashAttentionDiffKV layer at MiMo-V2's
// full-layer geometry (64 query heads over 4 kv heads, head size 192, v 128), blocks of 128, eager:
// vLLM's schedule passes no v, and the sweep's chunk after a prompt's first 300 tokens (100 new over
// 400 keys) is scheduled with 5 splits (13 entries) and run with 1 (9): the check reports it at TP 1,
// where the 512-token prefill's 256 m-blocks leave both sides at 1 split. Blocks of 16 agree.
TEST(Fa3InCall, TheChunkProbeFindsAScheduleWithoutV) {
  model_geometry m = testing::laguna_xs2();
  for (auto& l : m.layers) {
    l.kind = attn_kind::full, l.sliding_window = 0;
    l.num_heads = 64, l.num_kv_heads = 4, l.head_size = 192, l.head_size_v = 128;
  }
  m.num_attention_heads = 64, m.num_kv_heads = 4, m.head_size = 192;
  check_options o = fa3_options();
  o.engine.cg_mode = cudagraph_mode::none;
  o.block_size = 128;
  fa3_recorder rec;
  const report r = run_check(m, o, rec);
  EXPECT_FALSE(r.ok);
  ASSERT_FALSE(r.violations.empty());
  EXPECT_EQ(r.violations.front().inv, invariant::plan_run_shape);
  EXPECT_EQ(r.violations.front().buffer, "scheduler_metadata");
  o.block_size = 16;
  EXPECT_TRUE(run_check(m, o, rec).ok);
}

// A model of one window config is scheduled ahead of time: one call per step, on the persistent
// buffer (1 + 4 x round_up(max(max_num_seqs, largest capture), 4) entries), none prepared in the call.
TEST(Fa3InCall, AModelOfOneWindowIsScheduled) {
  model_geometry one = testing::laguna_xs2();
  for (auto& l : one.layers) l.num_heads = 64, l.kind = attn_kind::sliding, l.sliding_window = 512;
  fa3_recorder rec;
  check_options o = fa3_options();
  o.engine.max_num_seqs = o.max_num_seqs = 8;  // graphs 1, 2, 4, 8, 16
  run_check(one, o, rec);
  ASSERT_FALSE(rec.calls.empty());
  for (const auto& [name, f] : rec.calls) {
    EXPECT_FALSE(f.in_call);
    EXPECT_EQ(name, "model.layers.0.self_attn.attn");
    EXPECT_EQ(f.buffers.front().capacity_bytes, 4 * (1 + 4 * 16));
  }
}

}  // namespace
}  // namespace headroom
