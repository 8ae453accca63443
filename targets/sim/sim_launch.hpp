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

// A context chosen at compile time, so that a unit instantiates the bodies for one context only.
template <sim_mode Mode>
struct sim_launch_as {
  sim::memory& m;
  sim::launch_options options{};

  template <class K>
  void run(const typename K::params& p) {
    if constexpr (Mode == sim_mode::checked)
      sim::launch(m, K{}, p, options);
    else
      sim::launch_native(K{}, p);
  }
};

// The context chosen at run time (the tests' planted kernel): instantiates both.
struct sim_launch {
  sim::memory& m;
  sim_mode mode = sim_mode::checked;
  sim::launch_options options{};

  template <class K>
  void run(const typename K::params& p) {
    if (mode == sim_mode::checked)
      sim_launch_as<sim_mode::checked>{m, options}.template run<K>(p);
    else
      sim_launch_as<sim_mode::native>{m, options}.template run<K>(p);
  }
};

// Runs a packaged family on the simulator, checked or native. Each (context, element type) is
// compiled once, in its own unit of targets/sim/run/ (every body instantiated for one context and one
// element type is the heaviest instantiation of the project: about half a minute each). The checked
// ones are headroom::sim; the native ones, which only the overhead benchmark and the kernel tests
// run, are headroom::sim_native, so that the command does not wait for them.
template <class T>
void run_checked(sim::memory& m, const family_params<T>& params, const sim::launch_options& o = {});
void run_checked(sim::memory& m, const meta_params& params, const sim::launch_options& o = {});
template <class T>
void run_native(sim::memory& m, const family_params<T>& params, const sim::launch_options& o = {});
void run_native(sim::memory& m, const meta_params& params, const sim::launch_options& o = {});

#define HEADROOM_SIM_RUN_EXTERN(T)                                                                        \
  extern template void run_checked<T>(sim::memory&, const family_params<T>&, const sim::launch_options&); \
  extern template void run_native<T>(sim::memory&, const family_params<T>&, const sim::launch_options&);
HEADROOM_SIM_RUN_EXTERN(float)
HEADROOM_SIM_RUN_EXTERN(bf16)
HEADROOM_SIM_RUN_EXTERN(fp16)
#undef HEADROOM_SIM_RUN_EXTERN

// Either context, chosen at run time (tests, benchmarks): links headroom::sim_native.
template <class T>
void run_family(sim::memory& m, sim_mode mode, const family_params<T>& params,
                const sim::launch_options& o = {}) {
  mode == sim_mode::checked ? run_checked(m, params, o) : run_native(m, params, o);
}
inline void run_family(sim::memory& m, sim_mode mode, const meta_params& params,
                       const sim::launch_options& o = {}) {
  mode == sim_mode::checked ? run_checked(m, params, o) : run_native(m, params, o);
}

}  // namespace headroom
