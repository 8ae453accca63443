// fastdiv32 against the hardware's division: every numerator for small divisors, the edges of both
// ranges, and random pairs; quotients and remainders must be exact.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "kernels/fastdiv.hpp"

namespace headroom {
namespace {

void expect_exact(uint32_t d, uint32_t n) {
  const fastdiv32 f(d);
  ASSERT_EQ(f.div(n), n / d) << n << " / " << d;
  ASSERT_EQ(f.mod(n), n % d) << n << " % " << d;
}

TEST(Fastdiv, SmallDivisorsOverSmallAndLargeNumerators) {
  for (uint32_t d = 1; d <= 64; ++d) {
    for (uint32_t n = 0; n < 70000; ++n) expect_exact(d, n);
    for (uint32_t n = UINT32_MAX - 70000; n != 0; ++n) expect_exact(d, n);  // up to 2^32 - 1
  }
}

TEST(Fastdiv, EdgesOfTheDivisorRange) {
  for (const uint32_t d : {1u, 2u, 3u, 7u, 1u << 16, (1u << 16) + 1, (1u << 31) - 1, 1u << 31, (1u << 31) + 1,
                           UINT32_MAX - 1, UINT32_MAX})
    for (const uint32_t n :
         {0u, 1u, d - 1, d, d + 1, 2 * d - 1, 2 * d, UINT32_MAX / 2, UINT32_MAX - 1, UINT32_MAX})
      expect_exact(d, n);
}

TEST(Fastdiv, RandomPairs) {
  std::mt19937_64 rng(2026);
  for (int i = 0; i < 2'000'000; ++i) {
    const auto n = static_cast<uint32_t>(rng());
    auto d = static_cast<uint32_t>(rng() >> (rng() % 32));  // divisors of every size
    expect_exact(d == 0 ? 1 : d, n);
  }
}

TEST(Fastdiv, NoDivisorIsNotUsable) {
  EXPECT_FALSE(fastdiv32().usable());
  EXPECT_FALSE(fastdiv32(0).usable());
  EXPECT_TRUE(fastdiv32(8).usable());
}

}  // namespace
}  // namespace headroom
