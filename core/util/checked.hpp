// Checked 64-bit arithmetic for sizes and indices: every product of heads, tokens and head sizes
// goes through these, so an overflow is reported (overflow_error) instead of wrapping.
#pragma once

#include <cstdint>
#include <string>

#include "core/util/error.hpp"

namespace headroom {

inline int64_t checked_mul(int64_t a, int64_t b, const char* what = "size") {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw overflow_error(std::string(what) + ": " + std::to_string(a) + " * " + std::to_string(b) +
                         " overflows 64-bit");
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, const char* what = "size") {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw overflow_error(std::string(what) + ": " + std::to_string(a) + " + " + std::to_string(b) +
                         " overflows 64-bit");
  return r;
}

// Product of any number of factors, checked at each step.
template <class... Ts>
int64_t checked_product(const char* what, int64_t first, Ts... rest) {
  int64_t r = first;
  ((r = checked_mul(r, static_cast<int64_t>(rest), what)), ...);
  return r;
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline int64_t next_pow2(int64_t x) {
  int64_t p = 1;
  while (p < x) p = checked_mul(p, 2, "next_pow2");
  return p;
}

}  // namespace headroom
