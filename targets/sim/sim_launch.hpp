// The simulator's Launch policy (kernels/families.hpp): each body of a family's launch plan runs on
// the functional simulator, checked (sim_context: every access checked and logged) or native
// (native_context: no checks at all; the overhead benchmark's baseline, and an out-of-bounds store
// there corrupts the host heap as it would a GPU's memory).
#pragma once

#include <variant>

#include "core/sim/launch.hpp"
#include "core/sim/native_context.hpp"
#include "targets/sim/meta_package.hpp"
#include "targets/sim/package.hpp"

namespace headroom {

enum class sim_mode { checked, native };

struct sim_launch {
  sim::memory& m;
  sim_mode mode = sim_mode::checked;
  sim::launch_options options{};

  template <class K>
  void run(const typename K::params& p) {
    if (mode == sim_mode::checked)
      sim::launch(m, K{}, p, options);
    else
      sim::launch_native(K{}, p);
  }
};

// Runs a packaged family on the simulator. Compiled once, in sim_run.cpp (every body with both
// simulator contexts for three element types is the heaviest instantiation of the project: each
// caller instantiating it again cost about a minute of build).
template <class T>
void run_family(sim::memory& m, sim_mode mode, const family_params<T>& params,
                const sim::launch_options& o = {});
void run_family(sim::memory& m, sim_mode mode, const meta_params& params, const sim::launch_options& o = {});

extern template void run_family<float>(sim::memory&, sim_mode, const family_params<float>&,
                                       const sim::launch_options&);
extern template void run_family<bf16>(sim::memory&, sim_mode, const family_params<bf16>&,
                                      const sim::launch_options&);
extern template void run_family<fp16>(sim::memory&, sim_mode, const family_params<fp16>&,
                                      const sim::launch_options&);

}  // namespace headroom
