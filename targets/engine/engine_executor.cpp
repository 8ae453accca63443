// engine_executor.hpp: the GPU executor pointed at the engine worker.
#include "targets/engine/engine_executor.hpp"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <string>
#include <variant>

#include "core/util/error.hpp"
#include "kernels/triton_attention.hpp"
#include "targets/engine/engine_run.hpp"
#include "targets/engine/fa3_attention_inputs.hpp"
#include "targets/engine/fa3_launch.hpp"
#include "targets/engine/flashinfer_launch.hpp"
#include "targets/engine/vllm_triton_launch.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "targets/gpu/worker/worker_process.hpp"
#include "targets/sim/package.hpp"

namespace headroom {
namespace {

constexpr const char* engine_worker_name = "headroom_engine_worker";

gpu_executor_options engine_options() {
  gpu_executor_options o;
  o.kind = target_kind::engine;
  o.worker = find_engine_worker();
  o.modes = {gpu::run_mode::guarded};  // an engine kernel has no device-checked build
  o.fp32_in_tf32 = true;               // vLLM's Triton kernel: tl.dot of fp32 inputs is TF32
  o.decorate = [](const run_request& r, gpu::gpu_request& rq, std::vector<float>& reference,
                  int64_t& output_head_size) {
    if (const auto* t = std::get_if<triton_plan>(r.plan)) {
      rq.engine = engine::vllm_triton_engine_args(t->thr, triton_num_segments);
    } else if (const auto* f = std::get_if<fa3_plan>(r.plan)) {
      rq.engine = engine::fa3_engine_args(*f);
      output_head_size = engine::fa3_attach_attention(r, *f, rq, reference);
    }
  };
  return o;
}

}  // namespace

std::string find_engine_worker() { return gpu::find_beside_self(engine_worker_name, "targets/engine"); }

namespace {

struct probe_result {
  int count = 0;
  std::string reason, engines;
};

const probe_result& probe() {
  static std::once_flag once;
  static probe_result p;
  try {
    std::call_once(once, [] {
      const std::string exe = find_engine_worker();
      if (exe.empty()) {
        p.reason = std::string("no engine worker (") + engine_worker_name + ") beside this program";
        return;
      }
      gpu::worker_process w({0, exe, {}, 600'000});
      p.count = w.hello().device_count;
      p.reason = w.hello().error;
      p.engines = w.hello().engines;
    });
  } catch (const std::exception& e) {
    p.reason = e.what();
    p.count = 0;
  }
  return p;
}

gpu::elem_type elem_of(dtype d) {
  return d == dtype::bf16   ? gpu::elem_type::bf16
         : d == dtype::fp16 ? gpu::elem_type::fp16
                            : gpu::elem_type::f32;
}

}  // namespace

int engine_device_count(std::string* why) noexcept {
  const probe_result& p = probe();
  if (why) *why = p.reason;
  return p.count;
}

std::string engine_kernels() noexcept { return probe().engines; }

bool engine_listed(const std::string& engines, const char* name) {
  return ("," + engines + ",").find(std::string(",") + name + ",") != std::string::npos;
}

engine_executor::engine_executor() : kernels_(engine_options()), engines_(engine_kernels()) {
  const char* path = std::getenv(engine_runs_env);
  if (path && *path) {
    runs_log_.reset(std::fopen(path, "a"));
    if (!runs_log_) throw input_error("environment", engine_runs_env, path, "cannot be opened for appending");
  }
}

std::string engine_run_line(const run_request& r, bool on_engine, bool fa3_attention) {
  static constexpr const char* plan_kinds[] = {"triton",       "fi_decode",      "fi_prefill",
                                               "fa3",          "request_meta",   "mqa_meta",
                                               "offset_probe", "fi_prefill_sm90"};
  static_assert(std::size(plan_kinds) == std::variant_size_v<any_plan>);
  std::string kernel = r.plan ? plan_kinds[r.plan->index()] : "none";
  if (on_engine)
    kernel = std::holds_alternative<triton_plan>(*r.plan)      ? "vllm_triton"
             : std::holds_alternative<fi_decode_plan>(*r.plan) ? "flashinfer_decode"
             : std::holds_alternative<fa3_plan>(*r.plan) ? (fa3_attention ? "fa3_attention" : "fa3_scheduler")
                                                         : "flashinfer_prefill";
  if (on_engine && r.plan && std::holds_alternative<fa3_plan>(*r.plan) && std::get<fa3_plan>(*r.plan).in_call)
    kernel += "_in_call";  // no ahead-of-time schedule: the call prepared its own metadata
  return std::string(on_engine ? "engine" : "sim") + "\t" + kernel + "\t" + (r.layer ? r.layer->name : "") +
         "\t" + std::to_string(r.b ? r.b->num_seqs() : 0) + "\t" +
         std::to_string(r.b ? r.b->num_tokens() : 0) + "\n";
}

void engine_executor::log_run(const run_request& r, bool on_engine, bool fa3_attention) {
  if (!runs_log_) return;
  const std::string line = engine_run_line(r, on_engine, fa3_attention);
  std::lock_guard<std::mutex> lock(log_mutex_);
  std::fwrite(line.data(), 1, line.size(), runs_log_.get());
  std::fflush(runs_log_.get());
}

bool engine_executor::on_engine(const run_request& r) const {
  if (!r.plan) return false;
  if (std::holds_alternative<triton_plan>(*r.plan))
    return engine_listed(engines_, engine::vllm_triton_engine) &&
           (!r.layer || engine::vllm_triton_unsupported(r.layer->head_size).empty());
  if (const auto* f = std::get_if<fa3_plan>(r.plan))
    return engine_listed(engines_, engine::fa3_engine) && engine::fa3_unsupported(*f).empty();
  const auto* fp = std::get_if<fi_prefill_plan>(r.plan);
  if ((fp || std::holds_alternative<fi_decode_plan>(*r.plan)) && r.layer) {
    const rank_layer& l = *r.layer;
    return engine_listed(engines_, engine::flashinfer_engine) && l.head_size_v == l.head_size &&
           (!fp || engine::fi_prefill_tile_built(l.head_size, fp->cta_tile_q)) &&
           engine::flashinfer_unsupported(l.num_heads, l.num_kv_heads, l.head_size, elem_of(r.kv_dtype), fp)
               .empty();
  }
  return false;
}

observation engine_executor::run(const run_request& r) {
  if (!on_engine(r)) {
    log_run(r, false);
    ++simulated_;
    return sim_.run(r);
  }
  observation o = kernels_.run(r);
  // Which FA3 kernels ran: the attention call travels with its output (fa3_attention_inputs.hpp).
  const auto& names = kernels_.last().buffers;
  log_run(r, true, std::find(names.begin(), names.end(), output_buffer_name) != names.end());
  return o;
}

std::unique_ptr<engine_executor> make_engine_executor() {
  std::string why;
  if (engine_device_count(&why) == 0)
    throw input_error("command line", "--target", "engine",
                      why.empty() ? "no GPU device for the engine driver" : why);
  return std::make_unique<engine_executor>();
}

}  // namespace headroom
