// Campaign batch cases (batch_case.hpp).
#include "targets/gpu/batch_case.hpp"

#include "kernels/elem_type.hpp"
#include "kernels/input_values.hpp"
#include "kernels/tolerance.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "targets/gpu/request.hpp"

namespace headroom {
namespace {

template <class T>
gpu::batch_case attention_case(const run_request& r) {
  const auto host = r.step ? make_step_inputs<T>(*r.layer, *r.step, r.max_num_seqs, r.table_width,
                                                 r.block_size, r.seed, r.layout, input_values::deferred)
                           : make_attention_inputs<T>(*r.layer, *r.b, r.block_size, r.seed, r.layout,
                                                      input_values::deferred);
  sim::memory m(sim::storage::described);  // the worker makes the buffers: sizes and metadata only
  const auto in = upload_inputs(m, host);
  const bool packed = host.layout == kv_layout::packed;
  std::vector<int32_t> made = {in.in.q.id, in.in.k_cache.id};
  if (!packed) made.push_back(in.in.v_cache.id);
  gpu::batch_case c;
  c.rq = gpu::to_request<T>(m, make_params(m, in, *r.plan, *r.layer, *r.b), made);
  const gpu::elem_type type = gpu::elem_of<T>();
  auto generate = [&](int32_t id, value_stream s) {
    gpu::wire_buffer& b = c.rq.buffers[static_cast<std::size_t>(id)];
    b.gen = gpu::value_gen::stream, b.gen_type = type, b.key = stream_key(host.value_seed, s);
  };
  generate(in.in.q.id, value_stream::q);
  if (packed) {
    gpu::wire_buffer& b = c.rq.buffers[static_cast<std::size_t>(in.in.k_cache.id)];
    b.gen = gpu::value_gen::packed_kv, b.gen_type = type, b.row = host.head_size;
    b.key = stream_key(host.value_seed, value_stream::k),
    b.key_v = stream_key(host.value_seed, value_stream::v);
  } else {
    generate(in.in.k_cache.id, value_stream::k);
    generate(in.in.v_cache.id, value_stream::v);
  }
  c.compare = host.consistent;
  gpu::reference_job& j = c.ref;
  j.q = in.in.q.id, j.kv = in.in.k_cache.id, j.v = packed ? -1 : in.in.v_cache.id;
  j.v_offset = packed ? host.head_size : 0;
  j.block_table = in.in.block_table.id, j.seq_lens = in.in.seq_lens.id, j.query_start = in.in.query_start.id;
  j.output = in.output.id;
  j.heads = host.num_heads, j.kv_heads = host.num_kv_heads, j.head_size = host.head_size;
  j.block_size = host.block_size, j.window = host.sliding_window, j.width = host.max_blocks_per_seq;
  j.seqs = host.num_seqs(), j.stride = host.kv_row_stride();
  j.tokens = host.consistent ? host.query_start[static_cast<std::size_t>(host.num_seqs())] : 0;
  const tolerance tol = tolerance_for(r.kv_dtype);
  j.atol = tol.atol, j.rtol = tol.rtol;
  return c;
}

}  // namespace

gpu::batch_case make_batch_case(const run_request& r) {
  if (!r.layer || !r.plan || !r.b) throw std::invalid_argument("gpu executor: incomplete run request");
  if (!is_attention_plan(*r.plan)) {
    gpu::batch_case c;
    c.rq = make_gpu_request(r, nullptr);
    return c;
  }
  return with_elem_type(r.kv_dtype, "gpu executor", [&]<class T>() { return attention_case<T>(r); });
}

std::string guard_text(const char* run, const gpu::guard_report& g, const gpu::wire_buffer& b) {
  return std::string(run) + " run, launch " + std::to_string(g.launch) + ": " + b.name + ": " +
         std::to_string(g.corrupted_bytes) + " canary bytes changed at byte offsets [" +
         std::to_string(g.first) + ", " + std::to_string(g.last) + "] of a " +
         std::to_string(b.elem_bytes * b.extent) + "-byte buffer";
}

observation observe_verdict(const gpu::batch_case& c, const gpu::case_verdict& v) {
  observation o;
  if (v.faulted) {
    o.faulted = true;
    o.fault_detail = "guarded run: " + v.fault;
  }
  for (const auto& g : v.guards) {
    o.guard_corrupted = true;
    if (g.buffer < 0 || static_cast<std::size_t>(g.buffer) >= c.rq.buffers.size()) continue;
    if (!o.guard_detail.empty()) o.guard_detail += "; ";
    o.guard_detail += guard_text("campaign batch", g, c.rq.buffers[static_cast<std::size_t>(g.buffer)]);
  }
  if (v.compared) {
    o.output_checked = true;
    o.output_mismatch = v.bad > 0 || v.unwritten > 0;
    if (o.output_mismatch) {
      const int64_t H = c.ref.heads, D = c.ref.head_size, e = v.first_bad;
      o.mismatch_detail = std::to_string(v.bad) + " of " + std::to_string(c.ref.tokens * H * D) +
                          " output elements outside atol " + std::to_string(c.ref.atol) + " rtol " +
                          std::to_string(c.ref.rtol) + " (" + std::to_string(v.unwritten) + " never written)";
      if (e >= 0)
        o.mismatch_detail += "; first out[" + std::to_string(e / D / H) + "][" + std::to_string(e / D % H) +
                             "][" + std::to_string(e % D) + "]";
    }
  }
  return o;
}

}  // namespace headroom
