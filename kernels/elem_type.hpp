// The one host-side dispatch from a KV-cache dtype to the kernels' element type: callers write their
// typed code once, as a lambda template, and with_elem_type picks bf16, fp16 or float.
#pragma once

#include <stdexcept>
#include <string>

#include "core/model/geometry.hpp"
#include "kernels/numeric.hpp"

namespace headroom {

// f.template operator()<T>() with T the element type of d; std::invalid_argument naming `who` for a
// value outside the enum.
template <class F>
decltype(auto) with_elem_type(dtype d, const char* who, F&& f) {
  switch (d) {
    case dtype::bf16:
      return f.template operator()<bf16>();
    case dtype::fp16:
      return f.template operator()<fp16>();
    case dtype::fp32:
      return f.template operator()<float>();
  }
  throw std::invalid_argument(std::string(who) + ": unknown dtype");
}

}  // namespace headroom
