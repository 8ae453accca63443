// The native simulator's bodies for fp16 (sim_launch.hpp: one unit per context and element type).
#include "targets/sim/run/run_variant.hpp"

namespace headroom {

template void run_native<fp16>(sim::memory&, const family_params<fp16>&, const sim::launch_options&);

}  // namespace headroom
