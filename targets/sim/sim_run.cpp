// The simulator's family launches, instantiated once (sim_launch.hpp).
#include <variant>

#include "targets/sim/sim_launch.hpp"

namespace headroom {

template <class T>
void run_family(sim::memory& m, sim_mode mode, const family_params<T>& params, const sim::launch_options& o) {
  sim_launch launch{m, mode, o};
  std::visit([&](const auto& p) { launch_family(launch, p); }, params);
}

void run_family(sim::memory& m, sim_mode mode, const meta_params& params, const sim::launch_options& o) {
  sim_launch launch{m, mode, o};
  std::visit([&](const auto& p) { launch_family(launch, p); }, params);
}

template void run_family<float>(sim::memory&, sim_mode, const family_params<float>&,
                                const sim::launch_options&);
template void run_family<bf16>(sim::memory&, sim_mode, const family_params<bf16>&,
                               const sim::launch_options&);
template void run_family<fp16>(sim::memory&, sim_mode, const family_params<fp16>&,
                               const sim::launch_options&);

}  // namespace headroom
