// Triton glue: plan buffers at the plan's capacities, the layer's launch shape, and the launches
// of the 3D kernel + reduce or of the 2D kernel (sim_runs.hpp).
#include <stdexcept>

#include "core/sim/native_context.hpp"
#include "core/util/checked.hpp"
#include "kernels/sim_runs.hpp"

namespace headroom {


template <class T>
triton_params<T> make_triton_params(sim::memory& m, const sim_inputs<T>& in, const triton_plan& plan,
                                    const rank_layer& l, const batch& b, bool segmented) {
  triton_params<T> p;
  p.in = in.in;
  p.output = in.output;
  const triton_shape shape = triton_launch_shape(l, b);
  p.block_m = shape.block_m;
  p.block_q = shape.block_q;
  p.head_size_padded = next_pow2(l.head_size);
  const int64_t G = l.num_heads / l.num_kv_heads;
  const int64_t q_rows = p.block_q < in.in.max_query_len ? p.block_q : in.in.max_query_len;
  p.rows_per_pass = rows_per_pass(q_rows * G, l.head_size);
  if (segmented) {
    for (const char* name : {"segm_output", "segm_max", "segm_expsum"})
      if (plan_buffer(plan, name).elem_bytes != 4)
        throw std::invalid_argument(std::string("triton plan buffer ") + name + " is not fp32");
    p.segm_output = m.alloc<float>("segm_output", plan_buffer(plan, "segm_output").capacity_elems(), sim::fill::scratch);
    p.segm_max = m.alloc<float>("segm_max", plan_buffer(plan, "segm_max").capacity_elems(), sim::fill::scratch);
    p.segm_expsum = m.alloc<float>("segm_expsum", plan_buffer(plan, "segm_expsum").capacity_elems(), sim::fill::scratch);
  }
  return p;
}

template <class T>
void run_triton(sim::memory& m, sim_mode mode, const triton_params<T>& p, bool segmented,
                const sim::launch_options& o) {
  auto launch_all = [&]<int Dp>() {
    if (segmented) {
      launch_in_mode<triton_attention<T, Dp, true>>(m, mode, p, o);
      launch_in_mode<triton_segment_reduce<T, Dp>>(m, mode, p, o);
    } else {
      launch_in_mode<triton_attention<T, Dp, false>>(m, mode, p, o);
    }
  };
  switch (head_config(p.in.head_size)) {
    case 64: return launch_all.template operator()<64>();
    case 128: return launch_all.template operator()<128>();
    case 256: return launch_all.template operator()<256>();
    default: return launch_all.template operator()<512>();
  }
}

#define HEADROOM_TRITON_INSTANCES(T)                                                              \
  template triton_params<T> make_triton_params<T>(sim::memory&, const sim_inputs<T>&,            \
                                                  const triton_plan&, const rank_layer&,         \
                                                  const batch&, bool);                           \
  template void run_triton<T>(sim::memory&, sim_mode, const triton_params<T>&, bool,            \
                              const sim::launch_options&);
HEADROOM_TRITON_INSTANCES(float)
HEADROOM_TRITON_INSTANCES(bf16)
HEADROOM_TRITON_INSTANCES(fp16)
#undef HEADROOM_TRITON_INSTANCES

}  // namespace headroom
