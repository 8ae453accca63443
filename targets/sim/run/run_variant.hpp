// The definitions behind run_checked and run_native (sim_launch.hpp), included only by the units
// of this folder, each of which instantiates one (context, element type).
#pragma once

#include <variant>

#include "targets/sim/sim_launch.hpp"

namespace headroom {

template <sim_mode Mode, class Params>
void run_variant(sim::memory& m, const Params& params, const sim::launch_options& o) {
  sim_launch_as<Mode> launch{m, o};
  std::visit([&](const auto& p) { launch_family(launch, p); }, params);
}

template <class T>
void run_checked(sim::memory& m, const family_params<T>& params, const sim::launch_options& o) {
  run_variant<sim_mode::checked>(m, params, o);
}

template <class T>
void run_native(sim::memory& m, const family_params<T>& params, const sim::launch_options& o) {
  run_variant<sim_mode::native>(m, params, o);
}

}  // namespace headroom
