// gpu_executor: packaging a run request (the simulator's inputs and params), the worker call, and
// the observation (touched and out-of-bounds from the checked run, guards, faults, output).
#include "targets/gpu/gpu_executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <variant>

#include "core/util/error.hpp"
#include "targets/gpu/worker/worker_process.hpp"
#include "kernels/elem_type.hpp"
#include "kernels/numeric.hpp"
#include "kernels/reference.hpp"
#include "targets/gpu/batch_case.hpp"
#include "targets/gpu/request.hpp"

namespace headroom {
namespace {

// The simulator's package of the run (sim_executor.cpp builds the same), its inputs up to `cap`;
// the reference stays empty when the step's metadata runs past its buffers (undefined, as on the
// simulator).
template <class T>
gpu::gpu_request package(const run_request& r, std::vector<float>* reference, const input_cap& cap) {
  const auto host = r.step ? make_step_inputs<T>(*r.layer, *r.step, r.max_num_seqs, r.table_width,
                                                 r.block_size, r.seed, r.layout, input_values::host, cap)
                           : make_attention_inputs<T>(*r.layer, *r.b, r.block_size, r.seed, r.layout,
                                                      input_values::host, cap);
  sim::memory m;
  const auto in = upload_inputs(m, host);
  gpu::gpu_request rq = gpu::to_request<T>(m, make_params(m, in, *r.plan, *r.layer, *r.b));
  if (reference && host.consistent) {
    *reference = attention_reference(host);
    reference->resize(static_cast<std::size_t>(covered_output(host)));
  }
  return rq;
}

std::string record_name(const gpu::device_oob_record& a, const std::vector<std::string>& names) {
  if (a.buffer_id == gpu::shared_buffer_id) return std::string("shared:") + a.name;
  if (a.buffer_id >= 0 && static_cast<std::size_t>(a.buffer_id) < names.size()) return names[a.buffer_id];
  return "<unknown buffer>";
}

// The first `n` elements of the downloaded output (those the metadata's requests cover).
template <class T>
std::vector<float> output_floats(const std::vector<std::byte>& bytes, std::size_t n, int64_t& unwritten) {
  std::vector<float> out(std::min(n, bytes.size() / sizeof(T)));
  unwritten = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    bool poison = true;
    for (std::size_t k = 0; k < sizeof(T); ++k)
      poison = poison && bytes[i * sizeof(T) + k] == std::byte{0xFF};
    unwritten += poison ? 1 : 0;
    out[i] = to_float(v);
  }
  return out;
}

// Element i of a downloaded buffer still holds the scratch poison (0xFF bytes): never written.
bool poisoned(const std::vector<std::byte>& bytes, int64_t i, int64_t elem_bytes) {
  const auto at = static_cast<std::size_t>(i * elem_bytes), n = static_cast<std::size_t>(elem_bytes);
  if (i < 0 || at + n > bytes.size()) return true;
  for (std::size_t k = 0; k < n; ++k)
    if (bytes[at + k] != std::byte{0xFF}) return false;
  return true;
}

std::vector<float> to_floats(dtype d, const std::vector<std::byte>& bytes, std::size_t n,
                             int64_t& unwritten) {
  return with_elem_type(d, "gpu executor", [&]<class T>() { return output_floats<T>(bytes, n, unwritten); });
}

}  // namespace

struct gpu_executor::worker_holder {
  gpu::worker_process process;
};

bool gpu_worker_built() noexcept {
#ifdef HEADROOM_GPU_WORKER_PATH
  return true;
#else
  return false;
#endif
}

gpu::gpu_request make_gpu_request(const run_request& r, std::vector<float>* reference, target_kind target) {
  if (!r.layer || !r.plan || !r.b) throw std::invalid_argument("gpu executor: incomplete run request");
  if (!is_attention_plan(*r.plan)) {
    sim::memory m(sim::storage::described);
    const meta_params params = make_meta_params(m, *r.plan, *r.layer);
    return gpu::to_request(m, params);
  }
  const input_cap cap = input_cap_of(target);
  return with_elem_type(r.kv_dtype, "gpu executor", [&]<class T>() { return package<T>(r, reference, cap); });
}

gpu_executor::gpu_executor(gpu_executor_options o)
    : opt_(std::move(o)),
      worker_(
          new worker_holder{gpu::worker_process({opt_.device, opt_.worker, opt_.wrapper, opt_.timeout_ms})}) {
}

gpu_executor::~gpu_executor() = default;

int gpu_executor::worker_starts() const { return worker_->process.starts(); }

gpu::gpu_response gpu_executor::execute(const gpu::gpu_request& rq) {
  last_.runs.clear();
  last_.worker_died = false;
  last_.death.clear();
  const auto t0 = std::chrono::steady_clock::now();
  gpu::call_result c = worker_->process.call(rq);
  last_.worker_died = c.died;
  last_.death = c.death;
  gpu::gpu_response resp = std::move(c.resp);
  last_.call_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  last_.runs = resp.runs;
  return resp;
}

observation gpu_executor::run(const run_request& r) {
  refuse_model_only_plan(r, target_kind::gpu);
  last_ = {};
  if (!r.layer || !r.plan || !r.b) throw std::invalid_argument("gpu executor: incomplete run request");
  std::vector<float> ref;
  gpu::gpu_request rq = make_gpu_request(r, opt_.compare_output ? &ref : nullptr, opt_.kind);
  rq.modes = opt_.modes;
  rq.guards = opt_.guards;
  int64_t head_size = r.layer->head_size;  // of the output's rows, [tokens][heads][head_size]
  if (opt_.decorate) opt_.decorate(r, rq, ref, head_size);
  for (const auto& b : rq.buffers) last_.buffers.push_back(b.name), last_.extents.push_back(b.extent);
  const gpu::gpu_response resp = execute(rq);
  last_.ran = true;
  if (!resp.error.empty() && resp.runs.empty())
    throw std::runtime_error("gpu executor: the worker rejected the request: " + resp.error);

  observation o;
  if (last_.worker_died) {
    o.faulted = true;
    o.fault_detail = last_.death;
  }
  const gpu::run_result* out_run = nullptr;
  for (const auto& run : resp.runs) {
    if (run.faulted) {
      o.faulted = true;
      if (!o.fault_detail.empty()) o.fault_detail += "; ";
      o.fault_detail += std::string(gpu::to_string(run.mode)) + " run: " + run.fault;
    }
    if (run.mode == gpu::run_mode::checked) {
      for (const auto& pb : plan_buffers(*r.plan))
        for (std::size_t i = 0; i < rq.buffers.size() && i < run.touched.size(); ++i)
          if (rq.buffers[i].name == pb.name && run.touched[i] >= 0)
            o.touched.push_back({pb.name, rq.buffers[i].elem_bytes, run.touched[i]});
      for (const auto& a : run.oob) {
        access_record rec{record_name(a, last_.buffers), a.write != 0, a.index, a.extent, {}, {}};
        for (int k = 0; k < 3; ++k) rec.block[k] = a.block[k], rec.thread[k] = a.thread[k];
        o.oob.push_back(std::move(rec));
      }
      o.oob_count = run.oob_count;
      o.index_overflows = run.index_overflows;
      o.uninitialized_reads = o.worklist_uninitialized_reads = run.uninitialized_reads;
    }
    for (const auto& g : run.guards) {
      o.guard_corrupted = true;
      if (g.buffer < 0 || static_cast<std::size_t>(g.buffer) >= rq.buffers.size()) continue;
      const auto& b = rq.buffers[static_cast<std::size_t>(g.buffer)];
      if (!o.guard_detail.empty()) o.guard_detail += "; ";
      o.guard_detail += guard_text(gpu::to_string(run.mode), g, b);
    }
    // The output that counts is the production bodies' (guarded or plain); else the checked one.
    if (!run.faulted && !run.output.empty() && (!out_run || out_run->mode == gpu::run_mode::checked))
      out_run = &run;
  }
  if (out_run && opt_.compare_output && !ref.empty()) {
    const auto out = to_floats(r.kv_dtype, out_run->output, ref.size(), last_.unwritten);
    if (const auto* pp = std::get_if<fi_prefill_plan>(r.plan))
      o.rows_never_computed = prefill_rows_never_computed(
          *pp, static_cast<int64_t>(ref.size()) / (r.layer->num_heads * r.layer->head_size),
          r.layer->num_heads, r.layer->head_size,
          [&](int64_t i) {
            return i * 4 >= static_cast<int64_t>(out_run->states.size()) || !poisoned(out_run->states, i, 4);
          },
          [&](int64_t i) { return !poisoned(out_run->output, i, dtype_bytes(r.kv_dtype)); });
    const auto cmp =
        opt_.fp32_in_tf32 && r.kv_dtype == dtype::fp32
            ? compare_output(out, ref, tf32_tolerance, "float32 in TF32", r.layer->num_heads, head_size)
            : compare_output(out, ref, r.kv_dtype, r.layer->num_heads, head_size);
    o.output_checked = true;
    o.output_mismatch = cmp.mismatch || last_.unwritten > 0;
    o.mismatch_detail = cmp.detail;
    if (last_.unwritten > 0)
      o.mismatch_detail = std::to_string(last_.unwritten) +
                          " output elements never written (still poison); " + o.mismatch_detail;
    last_.max_abs_err = cmp.max_abs_err;
  }
  return o;
}

int gpu_device_count() noexcept {
  static std::once_flag once;
  static int count = 0;
  try {
    std::call_once(once, [] {
      if (!gpu_worker_built() && !std::getenv(gpu::worker_path_env)) return;
      gpu::worker_process probe;
      count = probe.hello().device_count;
    });
  } catch (...) {
    return 0;
  }
  return count;
}

std::unique_ptr<executor> make_gpu_executor() {
  if (gpu_device_count() == 0)
    throw input_error("command line", "--target", "gpu",
                      gpu_worker_built() ? "no GPU device (CUDA sees none)"
                                         : "no GPU device (this build has no CUDA support)");
  return std::make_unique<gpu_executor>();
}

}  // namespace headroom
