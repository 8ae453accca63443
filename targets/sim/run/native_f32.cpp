// The native simulator's bodies for float (sim_launch.hpp: one unit per context and element type).
#include "targets/sim/run/run_variant.hpp"

namespace headroom {

template void run_native<float>(sim::memory&, const family_params<float>&, const sim::launch_options&);

}  // namespace headroom
