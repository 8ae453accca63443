// Absurd sizes are rejected before anything is allocated: this binary replaces the global
// operator new to record the largest single request, and loading a config that claims 1e12
// layers or 1e9 heads must throw input_error without ever asking for more than a small buffer.
#include <atomic>
#include <cstdlib>
#include <new>

#include <gtest/gtest.h>

#include "core/model/loader.hpp"
#include "model_test_util.hpp"

namespace {
std::atomic<std::size_t> largest_request{0};
}  // namespace

// Both sides are malloc / free; GCC, inlining the replaced delete into a caller of the replaced new,
// cannot tell (-Wmismatched-new-delete at -O1).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  std::size_t seen = largest_request.load();
  while (n > seen && !largest_request.compare_exchange_weak(seen, n)) {
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace headroom::test {
namespace {

constexpr std::size_t small_buffer = 1 << 20;  // 1 MiB: far below 1e12 layers of anything

std::size_t largest_while_rejecting(const json& j) {
  largest_request = 0;
  EXPECT_THROW(parse(j), input_error);
  return largest_request.load();
}

TEST(allocation, absurd_layer_count_allocates_nothing_big) {
  json j = small_hf();
  j["num_hidden_layers"] = int64_t{1'000'000'000'000};
  EXPECT_LT(largest_while_rejecting(j), small_buffer);
  j["num_hidden_layers"] = max_layers + 1;
  EXPECT_LT(largest_while_rejecting(j), small_buffer);
}

TEST(allocation, absurd_head_count_allocates_nothing_big) {
  json j = small_hf();
  j["num_attention_heads"] = 1'000'000'000;
  EXPECT_LT(largest_while_rejecting(j), small_buffer);
  j = small_hf();
  j["num_attention_heads_per_layer"] = {32, 32, 1'000'000'000, 32};
  EXPECT_LT(largest_while_rejecting(j), small_buffer);
}

TEST(allocation, the_counter_sees_real_allocations) {
  largest_request = 0;
  json j = small_hf();
  j["num_hidden_layers"] = 100'000;
  EXPECT_EQ(parse(j).layers.size(), 100'000u);
  EXPECT_GE(largest_request.load(), 100'000 * sizeof(layer_geometry));
}

}  // namespace
}  // namespace headroom::test
