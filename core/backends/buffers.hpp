// Plan-time buffers and what a run needs of them. Sizes are bytes; indices are elements of the
// type the kernel writes (which may differ from the type the planner sized the buffer with:
// FlashInfer sizes tmp_v in fp32 and writes the output dtype, docs/engines.md §6).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace headroom {

struct buffer_plan {
  std::string name;
  int64_t capacity_bytes = 0;
  int64_t elem_bytes = 4;  // element size as the kernel indexes it
  int64_t capacity_elems() const { return capacity_bytes / elem_bytes; }
};

// What one kernel run touches of a buffer: the largest element index it accesses, plus one.
struct buffer_need {
  std::string name;
  int64_t elem_bytes = 4;
  int64_t elems = 0;
  int64_t bytes() const { return elems * elem_bytes; }
};

const buffer_plan* find_buffer(const std::vector<buffer_plan>& buffers, const std::string& name);

// The kernels' offsets are 32-bit in places (Triton program offsets, FlashInfer uint32 indices):
// an element index above this is an index_overflow.
inline constexpr int64_t max_kernel_index = (1LL << 31) - 1;

}  // namespace headroom
