// Host glue between plans and kernel bodies: uploads inputs into simulator memory, lays out the
// plan's buffers at the PLAN's capacities (capacity_bytes / elem_bytes elements), fills the kernel
// params with the LAYER's geometry, and launches the bodies checked (sim) or natively (bench).
// A GPU launcher (issue 5) mirrors this file with device buffers.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/backends/batch.hpp"
#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"
#include "core/model/geometry.hpp"
#include "core/sim/launch.hpp"
#include "core/sim/memory.hpp"
#include "core/sim/native_context.hpp"
#include "kernels/fi_decode.hpp"
#include "kernels/inputs.hpp"
#include "kernels/triton_attention.hpp"

namespace headroom {

// checked: sim_context, every access checked and logged. native: native_context, no checks at
// all, for the overhead benchmark and cases a checked run found clean (an out-of-bounds store in
// native mode corrupts the host heap, as it would a GPU's memory).
enum class sim_mode { checked, native };

// Names of the input buffers in simulator memory (and in out-of-bounds records).
inline constexpr const char* output_buffer_name = "output";

template <class T>
struct sim_inputs {
  paged_attention_inputs<T> in;
  buffer_ref<T> output;  // [tokens][heads][head_size], scratch (poisoned)
};

template <class T>
sim_inputs<T> upload_inputs(sim::memory& m, const attention_inputs<T>& h);

// The compile-time head layout for a head size: 64, 128, 256 or 512.
int head_config(int64_t head_size);

// Rows of a block pass: min(rows, 256 / lanes), at least 1.
int64_t rows_per_pass(int64_t rows, int64_t head_size);

// Triton: `segmented` (3D) allocates segm_output / segm_max / segm_expsum at the plan's capacities.
template <class T>
triton_params<T> make_triton_params(sim::memory& m, const sim_inputs<T>& in, const triton_plan& plan,
                                    const rank_layer& l, const batch& b, bool segmented);
template <class T>
void run_triton(sim::memory& m, sim_mode mode, const triton_params<T>& p, bool segmented,
                const sim::launch_options& o = {});

// FlashInfer decode: split allocates tmp_v (element = T) / tmp_s at the plan's capacities.
template <class T>
fi_decode_params<T> make_fi_decode_params(sim::memory& m, const sim_inputs<T>& in,
                                          const fi_decode_plan& plan);
template <class T>
void run_fi_decode(sim::memory& m, sim_mode mode, const fi_decode_params<T>& p,
                   const sim::launch_options& o = {});

// Shared by run_triton.cpp and run_fi.cpp: a plan's named buffer (a missing one is a caller bug)
// and one launch in the requested mode.
template <class Plan>
const buffer_plan& plan_buffer(const Plan& plan, const char* name) {
  const buffer_plan* b = find_buffer(plan.buffers, name);
  if (!b) throw std::invalid_argument(std::string("plan has no buffer ") + name);
  return *b;
}

template <class K, class P>
void launch_in_mode(sim::memory& m, sim_mode mode, const P& p, const sim::launch_options& o) {
  if (mode == sim_mode::checked)
    sim::launch(m, K{}, p, o);
  else
    sim::launch_native(K{}, p);
}

}  // namespace headroom
