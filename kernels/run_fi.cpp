// FlashInfer decode glue: work-item arrays and scratch at the plan's capacities, then the split-KV
// decode and (when split) the merge (sim_runs.hpp).
#include <stdexcept>

#include "core/sim/native_context.hpp"
#include "kernels/sim_runs.hpp"

namespace headroom {


template <class T>
fi_decode_params<T> make_fi_decode_params(sim::memory& m, const sim_inputs<T>& in,
                                          const fi_decode_plan& plan) {
  if (in.in.max_query_len > 1)
    throw std::invalid_argument("flashinfer decode plan run on a batch with query length > 1");
  if (static_cast<int64_t>(plan.request_indices.size()) < plan.padded ||
      static_cast<int64_t>(plan.kv_tile_indices.size()) < plan.padded ||
      static_cast<int64_t>(plan.o_indptr.size()) != in.in.num_seqs + 1)
    throw std::invalid_argument("flashinfer decode plan: work-item arrays do not match the batch");
  fi_decode_params<T> p;
  p.in = in.in;
  p.output = in.output;
  p.request_indices = m.upload("request_indices", plan.request_indices);
  p.kv_tile_indices = m.upload("kv_tile_indices", plan.kv_tile_indices);
  p.o_indptr = m.upload("o_indptr", plan.o_indptr);
  p.padded = plan.padded;
  p.num_work = plan.num_work;
  p.chunk_tokens = plan.chunk_pages * plan.page_size;
  p.split = plan.split;
  p.rows_per_pass = rows_per_pass(in.in.num_heads / in.in.num_kv_heads, in.in.head_size);
  if (plan.split) {
    const buffer_plan& tv = plan_buffer(plan, "tmp_v");
    if (tv.elem_bytes != static_cast<int64_t>(sizeof(T)))
      throw std::invalid_argument("flashinfer plan: tmp_v element size is not the output dtype's");
    p.tmp_v = m.alloc<T>("tmp_v", tv.capacity_elems(), sim::fill::scratch);
    p.tmp_s = m.alloc<float>("tmp_s", plan_buffer(plan, "tmp_s").capacity_elems(), sim::fill::scratch);
  }
  return p;
}

template <class T>
void run_fi_decode(sim::memory& m, sim_mode mode, const fi_decode_params<T>& p,
                   const sim::launch_options& o) {
  auto launch_all = [&]<int Dp>() {
    launch_in_mode<fi_batch_decode<T, Dp>>(m, mode, p, o);
    if (p.split) launch_in_mode<fi_merge_states<T, Dp>>(m, mode, p, o);
  };
  switch (head_config(p.in.head_size)) {
    case 64: return launch_all.template operator()<64>();
    case 128: return launch_all.template operator()<128>();
    case 256: return launch_all.template operator()<256>();
    default: return launch_all.template operator()<512>();
  }
}

#define HEADROOM_FI_INSTANCES(T)                                                                   \
  template fi_decode_params<T> make_fi_decode_params<T>(sim::memory&, const sim_inputs<T>&,        \
                                                        const fi_decode_plan&);                    \
  template void run_fi_decode<T>(sim::memory&, sim_mode, const fi_decode_params<T>&,              \
                                 const sim::launch_options&);
HEADROOM_FI_INSTANCES(float)
HEADROOM_FI_INSTANCES(bf16)
HEADROOM_FI_INSTANCES(fp16)
#undef HEADROOM_FI_INSTANCES

}  // namespace headroom
