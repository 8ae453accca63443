// See meta_package.hpp: host values and persistent buffers of the metadata families.
#include "targets/sim/meta_package.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace headroom {
namespace {

const buffer_plan& plan_buffer(const std::vector<buffer_plan>& buffers, const char* name) {
  const buffer_plan* b = find_buffer(buffers, name);
  if (!b) throw std::invalid_argument(std::string("plan has no buffer ") + name);
  return *b;
}

// A buffer the kernel writes, poisoned, at the plan's capacity.
template <class E>
buffer_ref<E> scratch_of(sim::memory& m, const std::vector<buffer_plan>& buffers, const char* name) {
  return m.alloc<E>(name, plan_buffer(buffers, name).capacity_elems(), sim::fill::scratch);
}

// A persistent input buffer at the plan's capacity holding the step's values (truncated where the
// step has more rows than the engine allocated: reading those is the kernel's out-of-bounds).
buffer_ref<const int32_t> data_of(sim::memory& m, const std::vector<buffer_plan>& buffers, const char* name,
                                  std::vector<int32_t> values) {
  values.resize(static_cast<std::size_t>(plan_buffer(buffers, name).capacity_elems()), 0);
  return m.upload(name, values);
}

fa3_scheduler_params fa3_params(sim::memory& m, const fa3_plan& p) {
  fa3_scheduler_params k;
  k.metadata = scratch_of<int32_t>(m, p.buffers, "scheduler_metadata");
  k.query_start = data_of(m, p.buffers, "query_start_loc", p.query_start);
  k.seq_lens = data_of(m, p.buffers, "seq_lens", p.seq_lens);
  k.batch = p.sched.batch, k.rounded = p.sched.rounded, k.nvec = p.sched.nvec;
  k.num_splits = p.sched.dynamic_split ? fa3_graph_max_splits : 1;
  k.dynamic_split = p.sched.dynamic_split, k.head_swizzle = p.sched.head_swizzle;
  return k;
}

request_meta_params request_params(sim::memory& m, const request_meta_plan& p) {
  request_meta_params k;
  k.indptr_src = m.upload("indptr_src", p.indptr);
  k.last_page_len_src = m.upload("last_page_len_src", p.last_page_len);
  k.indptr = scratch_of<int32_t>(m, p.buffers, "paged_kv_indptr");
  k.last_page_len = scratch_of<int32_t>(m, p.buffers, "paged_kv_last_page_len");
  k.padded = p.padded;
  return k;
}

mqa_metadata_params mqa_params(sim::memory& m, const mqa_meta_plan& p) {
  mqa_metadata_params k;
  k.context_lens = m.upload("context_lens", p.context_lens);
  k.schedule = scratch_of<int32_t>(m, p.buffers, "schedule_metadata");
  k.batch = p.batch, k.aligned = p.aligned, k.split_kv = mqa_split_kv, k.num_sms = mqa_num_sms;
  return k;
}

offset_probe_params probe_params(sim::memory& m, const offset_probe_plan& p, const rank_layer& l) {
  offset_probe_params k;
  k.out = scratch_of<int64_t>(m, p.buffers, "probe_offset");
  // The tensor whose last element lies further: q (its row stride) or the contiguous output.
  const bool q = largest_q_offset(p, l) >= largest_output_offset(p, l);
  k.token = std::max<int64_t>(p.q_rows - 1, 0), k.heads = l.num_heads;
  k.head_size = q ? l.head_size : head_size_v_of(l);
  k.row_stride = q ? q_row_stride(p, l) : 0;
  k.int32_offsets = p.int32_offsets;
  return k;
}

}  // namespace

meta_params make_meta_params(sim::memory& m, const any_plan& plan, const rank_layer& l) {
  if (const auto* p = std::get_if<fa3_plan>(&plan)) return fa3_params(m, *p);
  if (const auto* p = std::get_if<request_meta_plan>(&plan)) return request_params(m, *p);
  if (const auto* p = std::get_if<mqa_meta_plan>(&plan)) return mqa_params(m, *p);
  if (const auto* p = std::get_if<offset_probe_plan>(&plan)) return probe_params(m, *p, l);
  throw std::invalid_argument("an attention plan has no metadata body");
}

}  // namespace headroom
