// The native simulator's bodies for bf16 (sim_launch.hpp: one unit per context and element type).
#include "targets/sim/run/run_variant.hpp"

namespace headroom {

template void run_native<bf16>(sim::memory&, const family_params<bf16>&, const sim::launch_options&);

}  // namespace headroom
