// A run packaged for the kernels: the inputs uploaded into simulator memory, the plan's buffers laid
// out at the PLAN's capacities (capacity_bytes / elem_bytes elements) and the family's params filled
// with the LAYER's geometry. The simulator runs the package as it is (sim_launch.hpp); the GPU target
// sends the same memory and params to a device (targets/gpu), so both run exactly the same launch.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>

#include "core/backends/batch.hpp"
#include "core/backends/plan.hpp"
#include "core/model/geometry.hpp"
#include "core/sim/memory.hpp"
#include "kernels/families.hpp"
#include "kernels/inputs.hpp"

namespace headroom {

// Name of the output buffer in simulator memory (and in out-of-bounds records).
inline constexpr const char* output_buffer_name = "output";

template <class T>
struct sim_inputs {
  paged_attention_inputs<T> in;
  buffer_ref<T> output;  // [tokens][heads][head_size], scratch (poisoned)
};

template <class T>
sim_inputs<T> upload_inputs(sim::memory& m, const attention_inputs<T>& h);

// Triton: `segmented` (the 3D path) allocates segm_output / segm_max / segm_expsum at the plan's
// capacities; the caller decides it (triton_uses_3d, or a test forcing one path).
template <class T>
triton_params<T> make_triton_params(sim::memory& m, const sim_inputs<T>& in, const triton_plan& plan,
                                    const rank_layer& l, const batch& b, bool segmented);

// FlashInfer decode: when split, tmp_v (element = T) and tmp_s at the plan's capacities.
template <class T>
fi_decode_params<T> make_fi_decode_params(sim::memory& m, const sim_inputs<T>& in,
                                          const fi_decode_plan& plan);

// FlashInfer prefill (and tensor-core decode): the work lists at their allocated size with only the
// planner's entries written (the rest poison: a read of one is an uninitialized read), o_indptr,
// and when split merge_indptr, block_valid_mask, tmp_v (element = T) and tmp_s at the plan's capacities.
template <class T>
fi_prefill_params<T> make_fi_prefill_params(sim::memory& m, const sim_inputs<T>& in,
                                            const fi_prefill_plan& plan);

template <class T>
using family_params = std::variant<triton_params<T>, fi_decode_params<T>, fi_prefill_params<T>>;

// The (token, head) rows of a prefill run no block computed, from what the run wrote: for a split
// plan the rows whose partial states (tmp_s rows merge_indptr[t] .. merge_indptr[t + 1], `heads`
// entries each) all stayed unwritten; otherwise the output rows that stayed unwritten (their first
// element). state_written(i) / output_written(i): element i of tmp_s / of the output holds a value;
// a state past tmp_s's extent counts as written (its tile ran and wrote past the buffer: that is a
// capacity finding of its own, and the formulas count only rows no tile covers).
template <class StateWritten, class OutputWritten>
int64_t prefill_rows_never_computed(const fi_prefill_plan& plan, int64_t tokens, int64_t heads,
                                    int64_t head_size, StateWritten state_written,
                                    OutputWritten output_written) {
  int64_t rows = 0;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t h = 0; h < heads; ++h) {
      bool computed = false;
      if (!plan.split_kv) {
        computed = output_written((t * heads + h) * head_size);
      } else if (t + 1 < static_cast<int64_t>(plan.merge_indptr.size())) {
        for (int64_t r = plan.merge_indptr[t]; r < plan.merge_indptr[t + 1] && !computed; ++r)
          computed = state_written(r * heads + h);
      }
      rows += computed ? 0 : 1;
    }
  return rows;
}

// The params of the family that runs `plan` on this batch (Triton's path from triton_uses_3d).
// Throws std::invalid_argument for a plan no family runs or whose arrays do not fit the batch.
template <class T>
family_params<T> make_params(sim::memory& m, const sim_inputs<T>& in, const any_plan& plan,
                             const rank_layer& l, const batch& b);

}  // namespace headroom
