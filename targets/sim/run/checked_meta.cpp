// The checked simulator's metadata bodies (sim_launch.hpp: one unit per context and element type).
#include "targets/sim/run/run_variant.hpp"

namespace headroom {

void run_checked(sim::memory& m, const meta_params& params, const sim::launch_options& o) {
  run_variant<sim_mode::checked>(m, params, o);
}

}  // namespace headroom
