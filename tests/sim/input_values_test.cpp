// The counter-based input values (kernels/input_values.hpp): element e of a stream is the same draw
// as the sequential splitmix64 generator's (e / 2 + 1)-th (low half for even e, high half for odd),
// the magnitudes are exact and in [1/16, 1), the packed cache interleaves K's and V's rows, and
// deferred inputs have the host's sizes without their values.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/input_values.hpp"
#include "kernels/inputs.hpp"

namespace headroom {
namespace {

TEST(input_values, element_e_is_the_sequential_generators_draw) {
  for (uint64_t key :
       {uint64_t{0}, uint64_t{1}, uint64_t{0x0123456789ABCDEF}, stream_key(7, value_stream::v)}) {
    splitmix64 rng{key};
    for (int64_t e = 0; e < 2000; e += 2) {
      const uint64_t u = rng.next();
      EXPECT_EQ(input_value<float>(key, e), value_of_bits(static_cast<uint32_t>(u))) << key << " " << e;
      EXPECT_EQ(input_value<float>(key, e + 1), value_of_bits(static_cast<uint32_t>(u >> 32)))
          << key << " " << e;
    }
  }
}

TEST(input_values, magnitudes_by_hand) {
  EXPECT_EQ(value_of_bits(0), -0.0625f);                                 // m = 0, sign bit clear
  EXPECT_EQ(value_of_bits(1), 0.0625f);                                  // sign bit set
  EXPECT_EQ(value_of_bits(0xFFFFFFFFu), 1.0f - 15.0f / 8388608.0f);      // (2^19 + 15 (2^19 - 1)) / 2^23
  EXPECT_EQ(value_of_bits(0x2000u), -(524288.0f + 15.0f) / 8388608.0f);  // m = 1
  for (int64_t e = 0; e < 4096; ++e) {
    const float x = std::fabs(input_value<float>(99, e));
    EXPECT_GE(x, 0.0625f);
    EXPECT_LT(x, 1.0f);
  }
}

TEST(input_values, packed_rows_are_k_then_v_and_deferred_inputs_keep_their_sizes) {
  rank_layer l;
  l.name = "l0", l.num_heads = 8, l.num_kv_heads = 2, l.head_size = 24;
  batch b;
  b.seq_lens = {37, 5}, b.query_lens = {1, 5};
  const auto sep = make_attention_inputs<bf16>(l, b, 16, 11, kv_layout::separate);
  const auto pk = make_attention_inputs<bf16>(l, b, 16, 11, kv_layout::packed);
  ASSERT_EQ(pk.kv_cache.size(), 2 * sep.k_cache.size());
  const auto D = static_cast<std::size_t>(l.head_size);
  for (std::size_t r = 0; r < sep.k_cache.size() / D; ++r)
    for (std::size_t j = 0; j < D; ++j) {
      ASSERT_EQ(pk.kv_cache[2 * r * D + j].bits, sep.k_cache[r * D + j].bits);
      ASSERT_EQ(pk.kv_cache[(2 * r + 1) * D + j].bits, sep.v_cache[r * D + j].bits);
    }
  const auto later = make_attention_inputs<bf16>(l, b, 16, 11, kv_layout::packed, input_values::deferred);
  EXPECT_FALSE(later.has_values);
  EXPECT_TRUE(later.q.empty() && later.kv_cache.empty() && later.k_cache.empty());
  EXPECT_EQ(later.q_count, static_cast<int64_t>(sep.q.size()));
  EXPECT_EQ(later.kv_count, static_cast<int64_t>(sep.k_cache.size()));
  EXPECT_EQ(later.block_table, pk.block_table);  // the same metadata
  EXPECT_EQ(later.value_seed, pk.value_seed);
}

}  // namespace
}  // namespace headroom
