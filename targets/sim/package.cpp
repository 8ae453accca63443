// See package.hpp: inputs into simulator memory, plan buffers at the plan's capacities, params with
// the layer's geometry.
#include "targets/sim/package.hpp"

#include <algorithm>
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

// The entries a planner wrote: those before the first fi_unwritten slot.
std::vector<int32_t> written_entries(const std::vector<int32_t>& v) {
  return {v.begin(), std::find(v.begin(), v.end(), fi_unwritten)};
}

}  // namespace

template <class T>
sim_inputs<T> upload_inputs(sim::memory& m, const attention_inputs<T>& h) {
  sim_inputs<T> s;
  auto& in = s.in;
  // Deferred values (inputs.hpp): the buffers at their sizes, zero here; the runner fills them.
  auto values = [&](const char* name, const std::vector<T>& v, int64_t n) -> buffer_ref<const T> {
    if (h.has_values) return m.upload(name, v);
    const buffer_ref<T> r = m.alloc<T>(name, n, sim::fill::data);
    return {r.data, r.extent, r.id};
  };
  in.q = values("q", h.q, h.q_count);
  if (h.layout == kv_layout::packed) {  // one allocation; V is the view from its (D)th element on
    in.k_cache = values("kv_cache", h.kv_cache, 2 * h.kv_count);
    in.v_cache = view_from(in.k_cache, h.head_size);
  } else {
    in.k_cache = values("k_cache", h.k_cache, h.kv_count);
    in.v_cache = values("v_cache", h.v_cache, h.kv_count);
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
  p.request_indices = m.upload_prefix("request_indices", written_entries(plan.request_indices), plan.padded);
  p.kv_tile_indices = m.upload_prefix("kv_tile_indices", written_entries(plan.kv_tile_indices), plan.padded);
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

template <class T>
fi_prefill_params<T> make_fi_prefill_params(sim::memory& m, const sim_inputs<T>& in,
                                            const fi_prefill_plan& plan) {
  const int64_t padded = plan.padded_batch_size;
  if (static_cast<int64_t>(plan.request_indices.size()) != padded ||
      static_cast<int64_t>(plan.o_indptr.size()) != in.in.num_seqs + 1)
    throw std::invalid_argument("flashinfer prefill plan: work-item arrays do not match the batch");
  fi_prefill_params<T> p;
  p.in = in.in;
  p.output = in.output;
  p.request_indices = m.upload_prefix("request_indices", written_entries(plan.request_indices), padded);
  p.qo_tile_indices = m.upload_prefix("qo_tile_indices", written_entries(plan.qo_tile_indices), padded);
  p.kv_tile_indices = m.upload_prefix("kv_tile_indices", written_entries(plan.kv_tile_indices), padded);
  p.o_indptr = m.upload("o_indptr", plan.o_indptr);
  p.padded = padded;
  p.cta_tile_q = plan.cta_tile_q;
  p.total_num_rows = in.in.num_tokens;  // the rows the merge's device counter holds: the step's tokens
  p.split = plan.split_kv;
  p.group_div = fi_prefill_group_div(in.in);
  if (plan.split_kv) {
    p.kv_chunk_tokens = plan.kv_chunk_size;
    p.merge_indptr = m.upload_prefix("merge_indptr", written_entries(plan.merge_indptr),
                                     static_cast<int64_t>(plan.merge_indptr.size()));
    p.block_valid_mask = m.upload("block_valid_mask", plan.block_valid_mask);
    p.tmp_v = scratch_at_capacity<T>(m, plan, "tmp_v");
    p.tmp_s = scratch_at_capacity<float>(m, plan, "tmp_s");
  }
  return p;
}

template <class T>
family_params<T> make_params(sim::memory& m, const sim_inputs<T>& in, const any_plan& plan,
                             const rank_layer& l, const batch& b) {
  if (const auto* tp = std::get_if<triton_plan>(&plan))
    return make_triton_params(m, in, *tp, l, b, triton_uses_3d(*tp, b));
  if (const auto* fp = std::get_if<fi_decode_plan>(&plan)) return make_fi_decode_params(m, in, *fp);
  if (const auto* pp = std::get_if<fi_prefill_plan>(&plan)) return make_fi_prefill_params(m, in, *pp);
  throw std::invalid_argument("no kernel family runs this plan");
}

#define HEADROOM_PACKAGE_INSTANCES(T)                                                                     \
  template sim_inputs<T> upload_inputs<T>(sim::memory&, const attention_inputs<T>&);                      \
  template triton_params<T> make_triton_params<T>(sim::memory&, const sim_inputs<T>&, const triton_plan&, \
                                                  const rank_layer&, const batch&, bool);                 \
  template fi_decode_params<T> make_fi_decode_params<T>(sim::memory&, const sim_inputs<T>&,               \
                                                        const fi_decode_plan&);                           \
  template fi_prefill_params<T> make_fi_prefill_params<T>(sim::memory&, const sim_inputs<T>&,             \
                                                          const fi_prefill_plan&);                        \
  template family_params<T> make_params<T>(sim::memory&, const sim_inputs<T>&, const any_plan&,           \
                                           const rank_layer&, const batch&);
HEADROOM_PACKAGE_INSTANCES(float)
HEADROOM_PACKAGE_INSTANCES(bf16)
HEADROOM_PACKAGE_INSTANCES(fp16)
#undef HEADROOM_PACKAGE_INSTANCES

}  // namespace headroom
