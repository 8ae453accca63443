// engine_run.hpp: one engine-kernel run.
#include "targets/engine/engine_run.hpp"

#include <chrono>
#include <stdexcept>

#include "targets/engine/engine_arena.hpp"
#include "targets/engine/fa3_launch.hpp"
#include "targets/engine/flashinfer_launch.hpp"
#include "targets/engine/vllm_triton_launch.hpp"

namespace headroom::engine {
namespace {

nlohmann::json regions(const std::vector<arena_region>& rs) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rs) j.push_back({r.offset, r.bytes});
  return j;
}

}  // namespace

const char* engine_of(const gpu::gpu_request& rq) {
  switch (rq.fam) {
    case gpu::family::triton:
      return vllm_triton_engine;
    case gpu::family::fi_decode:
    case gpu::family::fi_prefill:
      return flashinfer_engine;
    case gpu::family::fa3_scheduler:
      return fa3_engine;
    default:
      throw std::invalid_argument(
          "the engine target runs vLLM's Triton unified attention, FlashInfer's batch decode and "
          "prefill and FA3's scheduler only (this run is another kernel family)");
  }
}

namespace {

nlohmann::json launch_of(const gpu::gpu_request& rq, const engine_arena& a) {
  switch (rq.fam) {
    case gpu::family::triton:
      return vllm_triton_launch(rq, a);
    case gpu::family::fi_prefill:
      return flashinfer_prefill_launch(rq, a);
    case gpu::family::fa3_scheduler:
      return fa3_scheduler_launch(rq, a);
    default:
      return flashinfer_decode_launch(rq, a);
  }
}

}  // namespace

nlohmann::json engine_header(const gpu::gpu_request& rq, const engine_arena& a) {
  engine_of(rq);  // refuses a family no engine runs
  nlohmann::json h = {{"arena_bytes", a.bytes},
                      {"fill", regions(a.fill)},
                      {"readback", regions(a.readback)},
                      {"launch", launch_of(rq, a)}};
  if (!rq.engine.empty()) {
    const auto args = nlohmann::json::parse(rq.engine);
    if (args.contains("repeat")) h["repeat"] = args.at("repeat");
  }
  return h;
}

gpu::gpu_response run_engine(driver_process& d, const gpu::gpu_request& rq) {
  for (const auto m : rq.modes)
    if (m != gpu::run_mode::guarded)
      throw std::invalid_argument(std::string("the engine target runs the guarded mode only, not ") +
                                  gpu::to_string(m));
  const auto t0 = std::chrono::steady_clock::now();
  const engine_arena a = make_engine_arena(rq);
  const nlohmann::json header = engine_header(rq, a);
  const auto t1 = std::chrono::steady_clock::now();
  const driver_reply rep = d.call(header, a.fill_bytes);
  gpu::gpu_response resp;
  gpu::run_result r;
  r.mode = gpu::run_mode::guarded;
  const std::string status = rep.answered ? rep.header.value("status", std::string("?")) : "died";
  if (status == "ok") {
    judge_readback(rq, a, rep.payload, r);
  } else if (status == "error") {  // the driver's own failure (its views, a missing module): loud
    resp.error = "engine driver: " + rep.header.value("detail", std::string());
    return resp;
  } else {  // the kernel faulted or raised, or the driver died
    r.faulted = true;
    r.fault = "engine kernel " + status + ": " + rep.header.value("detail", std::string());
    resp.worker_exiting = !rep.answered || rep.header.value("exiting", false);
  }
  const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  r.setup_ms = ms(t0, t1);
  r.kernels_ms = rep.header.value("median_ms", rep.header.value("kernel_ms", 0.0));
  r.total_ms = ms(t0, std::chrono::steady_clock::now());
  resp.runs.push_back(std::move(r));
  return resp;
}

}  // namespace headroom::engine
