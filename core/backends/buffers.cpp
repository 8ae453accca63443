// Lookup helper for plan buffers.
#include "core/backends/buffers.hpp"

namespace headroom {

const buffer_plan* find_buffer(const std::vector<buffer_plan>& buffers, const std::string& name) {
  for (const auto& b : buffers)
    if (b.name == name) return &b;
  return nullptr;
}

}  // namespace headroom
