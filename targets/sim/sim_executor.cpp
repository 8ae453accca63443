// sim_executor: inputs, plan dispatch, launches, reference comparison, observation (see header).
#include "targets/sim/sim_executor.hpp"

#include <stdexcept>
#include <variant>

#include "kernels/elem_type.hpp"
#include "kernels/numeric.hpp"
#include "kernels/reference.hpp"
#include "targets/sim/sim_launch.hpp"

namespace headroom {

namespace {

access_record to_record(const sim::sim_access& a) {
  access_record r;
  r.buffer = a.buffer;
  r.write = a.write;
  r.index = a.index;
  r.extent = a.extent;
  for (int i = 0; i < 3; ++i) {
    r.block[i] = a.block[i];
    r.thread[i] = a.thread[i];
  }
  return r;
}

void fill_observation(observation& o, const sim::memory& m, const std::vector<buffer_plan>& buffers) {
  for (const auto& pb : buffers) {
    const sim::sim_buffer* b = m.find(pb.name);
    if (b && b->stats.loads + b->stats.stores > 0) {
      o.touched.push_back({pb.name, b->elem_bytes, b->stats.touched});
      if (b->stats.stores > 0) o.written.push_back({pb.name, b->elem_bytes, b->stats.written_to});
    }
  }
  for (const auto& a : m.log.oob) o.oob.push_back(to_record(a));
  o.oob_count = m.log.oob_count;
  o.uninitialized_reads = m.log.uninitialized_reads;
  o.incomplete = m.log.aborted;
  for (std::size_t i = 0; i < m.size(); ++i)
    if (m[i].host_prefix > 0) o.worklist_uninitialized_reads += m[i].stats.uninitialized;
  o.races = m.log.races;
  o.index_overflows = m.log.index_overflows;
}

// The bodies are ours: a misuse of the context is a bug here, not in the case.
void check_misuse(const sim::memory& m) {
  if (m.log.misuse_count > 0)
    throw std::logic_error("simulator: kernel body misused its context: " + m.log.describe());
}

void keep_details(const sim::memory& m, sim_run_details& details) {
  details.log = m.log;
  details.simulated = true;
  for (std::size_t i = 0; i < m.size(); ++i)
    details.buffers.push_back({m[i].name, m[i].extent, m[i].elem_bytes, m[i].stats});
}

// An engine step's metadata or the offset probe: no attention inputs, no output to compare.
observation run_meta(const run_request& r, sim_run_details& details) {
  sim::memory m;
  run_checked(m, make_meta_params(m, *r.plan, *r.layer));
  check_misuse(m);
  observation o;
  fill_observation(o, m, plan_buffers(*r.plan));
  keep_details(m, details);
  return o;
}

template <class T>
observation run_typed(const run_request& r, sim_run_details& details) {
  const rank_layer& l = *r.layer;
  const batch& b = *r.b;
  const auto host =
      r.step ? make_step_inputs<T>(l, *r.step, r.max_num_seqs, r.table_width, r.block_size, r.seed, r.layout)
             : make_attention_inputs<T>(l, b, r.block_size, r.seed, r.layout);
  sim::memory m;
  const auto in = upload_inputs(m, host);
  run_checked(m, make_params(m, in, *r.plan, l, b));
  check_misuse(m);
  observation o;
  fill_observation(o, m, plan_buffers(*r.plan));
  keep_details(m, details);
  if (!host.consistent) return o;  // metadata past its buffers: the reference is undefined
  const auto out_t = m.download(in.output);
  std::vector<float> out(static_cast<std::size_t>(covered_output(host)));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = to_float(out_t[i]);
  if (const auto* pp = std::get_if<fi_prefill_plan>(r.plan)) {
    const sim::sim_buffer* ts = m.find("tmp_s");
    const sim::sim_buffer& ob = m.at(in.output.id);
    o.rows_never_computed = prefill_rows_never_computed(
        *pp, in.in.num_tokens, l.num_heads, l.head_size,
        [&](int64_t i) { return ts && i >= 0 && (i >= ts->extent || ts->written[i]); },
        [&](int64_t i) { return i >= 0 && i < ob.extent && ob.written[i]; });
  }
  auto ref = attention_reference(host);
  ref.resize(out.size());
  const auto cmp = compare_output(out, ref, r.kv_dtype, l.num_heads, l.head_size);
  o.output_checked = true;
  o.output_mismatch = cmp.mismatch;
  o.mismatch_detail = cmp.detail;
  details.max_abs_err = cmp.max_abs_err;
  return o;
}

}  // namespace

observation sim_executor::run(const run_request& r) {
  if (!r.layer || !r.plan || !r.b) throw std::invalid_argument("sim executor: incomplete run request");
  refuse_model_only_plan(r, target_kind::sim);
  last_ = {};
  if (!is_attention_plan(*r.plan)) return run_meta(r, last_);
  return with_elem_type(r.kv_dtype, "sim executor", [&]<class T>() { return run_typed<T>(r, last_); });
}

}  // namespace headroom
