// The buffer handles inside each kernel family's params, for the worker to point them at device
// memory: the parent builds params with the simulator's host glue (kernels/sim_runs.hpp, so the
// GPU runs exactly the launch the simulator runs), and only the pointers change on the device.
// The size asserts catch a params struct that grew a field this list does not know.
#pragma once

#include "kernels/fi_decode.hpp"
#include "kernels/gpu/planted.hpp"
#include "kernels/triton_attention.hpp"

namespace headroom::gpu {

template <class T, class F>
void for_each_input_ref(paged_attention_inputs<T>& in, F&& f) {
  f(in.q), f(in.k_cache), f(in.v_cache), f(in.block_table), f(in.seq_lens), f(in.query_start);
}

template <class T, class F>
void for_each_ref(triton_params<T>& p, F&& f) {
  static_assert(sizeof(triton_params<T>) == sizeof(paged_attention_inputs<T>) + 4 * sizeof(buffer_ref<float>) + 4 * sizeof(int64_t),
                "triton_params changed: update for_each_ref");
  for_each_input_ref(p.in, f);
  f(p.output), f(p.segm_output), f(p.segm_max), f(p.segm_expsum);
}

template <class T, class F>
void for_each_ref(fi_decode_params<T>& p, F&& f) {
  static_assert(sizeof(fi_decode_params<T>) ==
                    sizeof(paged_attention_inputs<T>) + 6 * sizeof(buffer_ref<float>) + 4 * sizeof(int64_t) + 8,
                "fi_decode_params changed: update for_each_ref");
  for_each_input_ref(p.in, f);
  f(p.request_indices), f(p.kv_tile_indices), f(p.o_indptr), f(p.output), f(p.tmp_v), f(p.tmp_s);
}

template <class F>
void for_each_ref(planted_params& p, F&& f) {
  f(p.out), f(p.in);
}

}  // namespace headroom::gpu
