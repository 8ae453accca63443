// See package.hpp: inputs into simulator memory, plan buffers at the plan's capacities, params with
// the layer's geometry.
#include "targets/sim/package.hpp"

#include <cmath>

#include "core/util/checked.hpp"

namespace headroom {
namespace {

// A plan's named buffer; a missing one is a bug of the planner, not of the case.
template <class Plan>
const buffer_plan& plan_buffer(const Plan& plan, const char* name) {
  const buffer_plan* b = find_buffer(plan.buffers, name);
  if (!b) throw std::invalid_argument(std::string("plan has no buffer ") + name);
  return *b;
}

// A plan buffer as simulator scratch of element type E, at the plan's capacity.
template <class E, class Plan>
buffer_ref<E> scratch_at_capacity(sim::memory& m, const Plan& plan, const char* name) {
  const buffer_plan& b = plan_buffer(plan, name);
  if (b.elem_bytes != static_cast<int64_t>(sizeof(E)))
    throw std::invalid_argument(std::string("plan buffer ") + name + " has " + std::to_string(b.elem_bytes) +
                                "-byte elements, the kernel writes " + std::to_string(sizeof(E)));
  return m.alloc<E>(name, b.capacity_elems(), sim::fill::scratch);
}

}  // namespace

template <class T>
sim_inputs<T> upload_inputs(sim::memory& m, const attention_inputs<T>& h) {
  sim_inputs<T> s;
  auto& in = s.in;
  in.q = m.upload("q", h.q);
  if (h.layout == kv_layout::packed) {  // one allocation; V is the view from its (D)th element on
    in.k_cache = m.upload("kv_cache", h.kv_cache);
    in.v_cache = view_from(in.k_cache, h.head_size);
  } else {
    in.k_cache = m.upload("k_cache", h.k_cache);
    in.v_cache = m.upload("v_cache", h.v_cache);
  }
  in.block_table = m.upload("block_table", h.block_table);
  in.seq_lens = m.upload("seq_lens", h.seq_lens);
  in.query_start = m.upload("query_start", h.query_start);
  in.num_seqs = h.num_seqs();
  in.num_tokens = h.num_tokens();
  in.num_heads = h.num_heads;
  in.num_kv_heads = h.num_kv_heads;
  in.head_size = h.head_size;
  in.block_size = h.block_size;
  in.kv_row_stride = h.kv_row_stride();
  in.max_blocks_per_seq = h.max_blocks_per_seq;
  in.sliding_window = h.sliding_window;
  in.max_query_len = h.max_query_len;
  in.scale = 1.0f / std::sqrt(static_cast<float>(h.head_size));
  s.output = m.alloc<T>(output_buffer_name, in.num_tokens * in.num_heads * in.head_size, sim::fill::scratch);
  return s;
}

template <class T>
triton_params<T> make_triton_params(sim::memory& m, const sim_inputs<T>& in, const triton_plan& plan,
                                    const rank_layer& l, const batch& b, bool segmented) {
  triton_params<T> p;
  p.in = in.in;
  p.in.int32_offsets = plan.int32_offsets;
  p.output = in.output;
  p.block_q = triton_launch_shape(l, b).block_q;
  p.head_size_padded = next_pow2(l.head_size);
  p.segmented = segmented;
  if (segmented) {
    p.segm_output = scratch_at_capacity<float>(m, plan, "segm_output");
    p.segm_max = scratch_at_capacity<float>(m, plan, "segm_max");
    p.segm_expsum = scratch_at_capacity<float>(m, plan, "segm_expsum");
  }
  return p;
}

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
  if (plan.split) {
    p.tmp_v = scratch_at_capacity<T>(m, plan, "tmp_v");
    p.tmp_s = scratch_at_capacity<float>(m, plan, "tmp_s");
  }
  return p;
}

bool runs_kernels(const any_plan& plan) { return !std::holds_alternative<fi_prefill_plan>(plan); }

template <class T>
family_params<T> make_params(sim::memory& m, const sim_inputs<T>& in, const any_plan& plan,
                             const rank_layer& l, const batch& b) {
  if (const auto* tp = std::get_if<triton_plan>(&plan))
    return make_triton_params(m, in, *tp, l, b, triton_uses_3d(*tp, b));
  if (const auto* fp = std::get_if<fi_decode_plan>(&plan)) return make_fi_decode_params(m, in, *fp);
  throw std::invalid_argument("no kernel family runs a prefill plan");
}

#define HEADROOM_PACKAGE_INSTANCES(T)                                                                     \
  template sim_inputs<T> upload_inputs<T>(sim::memory&, const attention_inputs<T>&);                      \
  template triton_params<T> make_triton_params<T>(sim::memory&, const sim_inputs<T>&, const triton_plan&, \
                                                  const rank_layer&, const batch&, bool);                 \
  template fi_decode_params<T> make_fi_decode_params<T>(sim::memory&, const sim_inputs<T>&,               \
                                                        const fi_decode_plan&);                           \
  template family_params<T> make_params<T>(sim::memory&, const sim_inputs<T>&, const any_plan&,           \
                                           const rank_layer&, const batch&);
HEADROOM_PACKAGE_INSTANCES(float)
HEADROOM_PACKAGE_INSTANCES(bf16)
HEADROOM_PACKAGE_INSTANCES(fp16)
#undef HEADROOM_PACKAGE_INSTANCES

}  // namespace headroom
