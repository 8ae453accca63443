// A campaign batch's kernel launches gathered into one launch per kernel (case_launch.cuh). Each
// case's family plan still issues its launches in order (launch 0, 1, ... of the case); instead of
// going out one by one, every case's launch k of kernel K with the same block shape joins one
// group, and a group runs as a single grid: its blocks are the cases' blocks laid end to end, and
// each block finds its case by bisection over the cases' first blocks. Groups go out in the order
// of k on one stream, so launch k + 1 of a case always runs after its launch k. A batch of a
// thousand small cases is then a few dozen launches instead of a few thousand, and the host's
// launch calls stop being the worker's bottleneck. Plain C++ (tested without a device,
// tests/gpu/case_batch_test.cpp): the dispatch units instantiate the launchers, batch.cu uploads
// the entries and calls them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/sim/device_types.hpp"

namespace headroom::gpu {

// In front of each case's params in a group's entry: its first block in the group's grid and its
// own grid. The params follow at case_params_at.
struct case_header {
  int64_t block0 = 0;
  launch_dim grid;
};
inline constexpr std::size_t case_params_at = 32;
static_assert(sizeof(case_header) <= case_params_at, "case_header grew: move case_params_at");

// Block `local` of a case's grid as (x, y, z), x fastest (CUDA's order).
HEADROOM_HOST_DEVICE inline launch_dim block_of_case(int64_t local, launch_dim grid) {
  return {local % grid.x, local / grid.x % grid.y, local / (grid.x * grid.y)};
}

inline constexpr int64_t max_grid_x = 2147483647;  // CUDA's limit on gridDim.x

// Launches one group on a stream (a cudaStream_t): `n` entries of `stride` bytes at `entries`
// (device memory), `blocks` blocks of shape `block` in all, `smem` bytes of dynamic shared memory.
using case_group_launcher = void (*)(const std::byte* entries, int n, int stride, int64_t blocks,
                                     launch_dim block, std::size_t smem, void* stream);

struct case_group {
  case_group_launcher launcher = nullptr;
  int step = 0;
  launch_dim block;
  std::size_t smem = 0;  // the most any of its cases needs
  int stride = 0;        // bytes per entry (header and params, 16-byte aligned)
  int n = 0;             // cases
  int64_t blocks = 0;    // the grid: every case's blocks
  std::size_t at = 0;    // its entries' offset in the batch's upload
};

class case_batch {
 public:
  // One case's launch `step` of a kernel (identified by its launcher): the params' bytes, the
  // case's grid (1 to max_grid_x blocks) and block, and the shared memory it needs. A group that
  // would pass max_grid_x blocks is closed and another begun.
  void add(case_group_launcher launcher, int step, launch_dim grid, launch_dim block, std::size_t smem,
           const void* params, std::size_t params_bytes);
  // Every group's entries, one after the other (each group's at case_group::at), for one upload.
  std::vector<std::byte> entries() const;
  // The groups in launch order: by step, then in the order they were begun.
  std::vector<case_group> launch_order() const;
  bool empty() const { return groups_.empty(); }

 private:
  struct open_group {
    case_group g;
    std::vector<std::byte> entries;
  };
  std::vector<open_group> groups_;
};

}  // namespace headroom::gpu
