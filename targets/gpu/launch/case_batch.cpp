// case_batch (case_batch.hpp).
#include "targets/gpu/launch/case_batch.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace headroom::gpu {
namespace {

constexpr std::size_t entry_alignment = 16;

std::size_t round_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

bool same_shape(launch_dim a, launch_dim b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

}  // namespace

void case_batch::add(case_group_launcher launcher, int step, launch_dim grid, launch_dim block,
                     std::size_t smem, const void* params, std::size_t params_bytes) {
  const int64_t blocks = grid.count();
  if (blocks < 1 || blocks > max_grid_x)
    throw std::invalid_argument("case batch: a case's grid of " + std::to_string(blocks) + " blocks");
  const auto stride = static_cast<int>(round_up(case_params_at + params_bytes, entry_alignment));
  auto o = std::find_if(groups_.begin(), groups_.end(), [&](const open_group& x) {
    const case_group& g = x.g;
    return g.launcher == launcher && g.step == step && same_shape(g.block, block) && g.stride == stride &&
           g.blocks <= max_grid_x - blocks;
  });
  if (o == groups_.end()) {
    o = groups_.insert(groups_.end(), open_group{});
    o->g.launcher = launcher, o->g.step = step, o->g.block = block, o->g.stride = stride;
  }
  case_group& g = o->g;
  const std::size_t at = o->entries.size();
  o->entries.resize(at + static_cast<std::size_t>(stride));
  const case_header h{g.blocks, grid};
  std::memcpy(o->entries.data() + at, &h, sizeof(h));
  std::memcpy(o->entries.data() + at + case_params_at, params, params_bytes);
  g.smem = std::max(g.smem, smem);
  g.blocks += blocks;
  g.n += 1;
}

std::vector<std::byte> case_batch::entries() const {
  std::vector<std::byte> out;
  for (const open_group& o : groups_) {
    out.insert(out.end(), o.entries.begin(), o.entries.end());
    out.resize(round_up(out.size(), entry_alignment));
  }
  return out;
}

std::vector<case_group> case_batch::launch_order() const {
  std::vector<case_group> out;
  std::size_t at = 0;
  for (const open_group& o : groups_) {
    out.push_back(o.g);
    out.back().at = at;
    at += round_up(o.entries.size(), entry_alignment);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const case_group& a, const case_group& b) { return a.step < b.step; });
  return out;
}

}  // namespace headroom::gpu
