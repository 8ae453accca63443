// engine_kernels: the engines' own attention kernels (vLLM's Triton unified attention, FlashInfer's
// CUDA-core batch decode and its batch prefill) timed on the engine target's guarded arena, bf16,
// 16-token pages. Decode (the default): Laguna XS.2's two layer geometries (full layers 48 query
// heads, sliding 64, both timed without the window; 8 kv heads; head size 128) per TP, over
// bench_gpu_decode's batch x context 1x32768, 16x4096, 64x4096, 128x2048, 256x1024 (its geometry
// is the sliding layers' at TP 1); bytes/s count every KV byte once, q and the output.
// --step prefill: causal prefill without earlier context at bench_gpu_prefill's geometry and shapes
// (64 query heads, 8 kv heads, head size 128; 1x8192, 4x4096, 8x2048, 32x512) per TP; TFLOP/s from
// the causal count 4 * Hq * D * sum q (q + 1) / 2, as bench_gpu_prefill. The host builds each
// arena image up to the engine target's cap (max_engine_input_elems, 2^28 elements of q or of K a
// layer): the largest here are the decode KV of 64x4096, 128x2048 and 256x1024 (2^28, 512 MiB of
// K and as much of V in bf16) and the prefill q of 4x4096, 8x2048 and 32x512 at TP 1 (2^27).
// Each plan is the fixed mirror's (the buffers the engine allocates for that group); each figure
// is the median of --repeat launches, each after an L2 flush, timed by the engine's driver with CUDA
// events.
//   engine_kernels [--step decode|prefill] [--repeat N] [--tp 1,2,4,8] [--out FILE.json]
// Needs the engine worker's drivers (HEADROOM_VLLM_DIR; a build with -DHEADROOM_FLASHINFER_DIR);
// an engine whose driver is not up is left out. Prints a markdown table. Not a ctest.
#include <cstdio>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"
#include "kernels/inputs.hpp"
#include "kernels/triton_attention.hpp"
#include "targets/engine/engine_executor.hpp"
#include "targets/engine/vllm_triton_launch.hpp"
#include "targets/gpu/gpu_executor.hpp"
#include "targets/gpu/worker/worker_process.hpp"

namespace headroom {
namespace {

struct shape {
  int64_t batch, len;
};
// bench_gpu_decode's and bench_gpu_prefill's shapes, each within max_engine_input_elems at TP 1.
constexpr shape decode_shapes[] = {{1, 32768}, {16, 4096}, {64, 4096}, {128, 2048}, {256, 1024}};
constexpr shape prefill_shapes[] = {{1, 8192}, {4, 4096}, {8, 2048}, {32, 512}};
constexpr int64_t head_size = 128, page = 16;

// Elements a shape's layer holds at TP 1, `per_token` a token (decode: K's 8 kv heads; prefill:
// q's 64 heads), all within the cap.
constexpr bool within_engine_cap(std::span<const shape> shapes, int64_t per_token) {
  for (const shape& s : shapes)
    if (s.batch * s.len * per_token > max_engine_input_elems) return false;
  return true;
}
static_assert(within_engine_cap(decode_shapes, 8 * head_size) &&
              within_engine_cap(prefill_shapes, 64 * head_size));

struct figure {
  std::string engine, layers;
  int64_t tp, heads, kv_heads, batch, len;
  double ms = 0, rate = 0;  // TB/s (decode) or TFLOP/s (prefill)
  std::string error;
};

// One step of `s.batch` requests: decode after `s.len` tokens, or a causal prefill of `s.len`.
batch step_batch(bool prefill, const shape& s) {
  if (!prefill) return decode_batch(s.batch, s.len);
  batch b;
  b.seq_lens.assign(static_cast<std::size_t>(s.batch), s.len);
  b.query_lens.assign(static_cast<std::size_t>(s.batch), s.len);
  return b;
}

any_plan plan_of(const std::string& engine, const rank_layer& l, const batch& b, bool prefill) {
  if (engine != "flashinfer")
    return plan_triton(l.num_heads, l.num_kv_heads, head_size, triton_options{}, engine_settings{});
  flashinfer_options fo;  // bench_gpu_prefill's: bf16 kv and output, the H200's parameters
  fo.page_size = page;
  fo.kv_dtype_bytes = fo.o_dtype_bytes = 2;
  if (prefill) return plan_fi_prefill(l.num_heads, l.num_kv_heads, head_size, b, fo);
  return plan_fi_decode(l.num_heads, l.num_kv_heads, head_size, dtype::bf16, b, fo);
}

// The figure of a run that took `ms`: bytes/s for decode, causal FLOP/s for prefill.
double rate_of(bool prefill, const rank_layer& l, const shape& s, double ms) {
  if (prefill)
    return 4.0 * l.num_heads * head_size * static_cast<double>(s.batch) * (s.len * (s.len + 1) / 2) /
           (ms * 1e-3) * 1e-12;
  const double kv = 2.0 * s.batch * s.len * l.num_kv_heads * head_size * 2;
  const double q_out = 2.0 * s.batch * l.num_heads * head_size * 2;
  return (kv + q_out) / (ms * 1e-3) * 1e-12;
}

// The median time of `engine`'s kernel on one step of a layer of H query and KV kv heads.
figure time_one(gpu::worker_process& w, const std::string& engine, const rank_layer& l, const shape& s,
                bool prefill, int repeat) {
  figure f{engine,
           l.kind == attn_kind::sliding ? "sliding" : "full",
           0,
           l.num_heads,
           l.num_kv_heads,
           s.batch,
           s.len,
           0,
           0,
           {}};
  const batch b = step_batch(prefill, s);
  const any_plan plan = plan_of(engine, l, b, prefill);
  const run_request r{&l, dtype::bf16, page, &plan, &b, 1, nullptr, 0, 0, kv_layout::packed};
  gpu::call_result c;
  try {  // a layer too large for the host's arena image, a worker that cannot start
    gpu::gpu_request rq = make_gpu_request(r, nullptr, target_kind::engine);
    nlohmann::json args = nlohmann::json::object();
    if (const auto* t = std::get_if<triton_plan>(&plan))
      args = nlohmann::json::parse(engine::vllm_triton_engine_args(t->thr, triton_num_segments));
    args["repeat"] = repeat;
    rq.engine = args.dump();
    c = w.call(rq);
  } catch (const std::exception& e) {
    f.error = e.what();
    return f;
  }
  if (c.died || !c.resp.error.empty() || c.resp.runs.empty() || c.resp.runs[0].faulted) {
    f.error = c.died ? c.death : !c.resp.error.empty() ? c.resp.error : "faulted";
    return f;
  }
  f.ms = c.resp.runs[0].kernels_ms;
  f.rate = rate_of(prefill, l, s, f.ms);
  return f;
}

std::vector<int64_t> parse_list(const std::string& s) {
  std::vector<int64_t> v;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');) v.push_back(std::stoll(x));
  return v;
}

// The layers timed at one TP: Laguna XS.2's two for decode, bench_gpu_prefill's one for prefill.
std::vector<rank_layer> layers_at(bool prefill, int64_t tp) {
  // No window: every figure reads the whole context, so the bytes counted are the bytes read.
  if (prefill) return {rank_layer{"layer", attn_kind::full, 64 / tp, 8 / tp, head_size, head_size, 0, 0}};
  return {rank_layer{"layer", attn_kind::full, 48 / tp, 8 / tp, head_size, head_size, 0, 0},
          rank_layer{"layer", attn_kind::sliding, 64 / tp, 8 / tp, head_size, head_size, 0, 0}};
}

int run(bool prefill, int repeat, const std::vector<int64_t>& tps, const std::string& out) {
  gpu::worker_process w({0, find_engine_worker(), {}, 600'000});
  const auto& hello = w.hello();
  if (hello.device_count == 0) {
    std::fprintf(stderr, "engine_kernels: no engine driver: %s\n", hello.error.c_str());
    return 2;
  }
  std::vector<std::string> engines;
  for (const char* e : {"vllm_triton", "flashinfer"})
    if (engine_listed(hello.engines, e)) engines.push_back(e);
  std::vector<figure> figs;
  std::printf("device %s, engines %s, median of %d launches (L2 flushed)\n\n", hello.device_name.c_str(),
              hello.engines.c_str(), repeat);
  std::printf("| engine | layers | TP | Hq / Hkv | batch x %s | ms | %s |\n|---|---|---|---|---|---|---|\n",
              prefill ? "tokens" : "context", prefill ? "TFLOP/s" : "TB/s");
  for (const int64_t tp : tps)
    for (const rank_layer& l : layers_at(prefill, tp)) {
      for (const auto& s :
           prefill ? std::span<const shape>(prefill_shapes) : std::span<const shape>(decode_shapes))
        for (const auto& e : engines) {
          figure f = time_one(w, e, l, s, prefill, repeat);
          f.tp = tp;
          std::printf("| %s | %s | %lld | %lld / %lld | %lldx%lld | %s | %.2f |\n", e.c_str(),
                      f.layers.c_str(), (long long)tp, (long long)f.heads, (long long)f.kv_heads,
                      (long long)s.batch, (long long)s.len,
                      f.error.empty() ? std::to_string(f.ms).c_str() : f.error.c_str(), f.rate);
          std::fflush(stdout);
          figs.push_back(f);
        }
    }
  if (!out.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& f : figs)
      j.push_back({{"engine", f.engine},
                   {"layers", f.layers},
                   {"tp", f.tp},
                   {"heads", f.heads},
                   {"kv_heads", f.kv_heads},
                   {"batch", f.batch},
                   {"len", f.len},
                   {"ms", f.ms},
                   {"step", prefill ? "prefill" : "decode"},
                   {prefill ? "tflops" : "tbps", f.rate},
                   {"error", f.error}});
    std::ofstream(out) << j.dump(1) << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace headroom

int main(int argc, char** argv) {
  int repeat = 30;
  bool prefill = false;
  std::vector<int64_t> tps = {1, 2, 4, 8};
  std::string out;
  try {
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string f = argv[i], v = argv[i + 1];
      if (f == "--step") {
        if (v != "decode" && v != "prefill") {
          std::fprintf(stderr, "engine_kernels: --step %s: decode or prefill\n", v.c_str());
          return 2;
        }
        prefill = v == "prefill";
      } else if (f == "--repeat")
        repeat = std::stoi(v);
      else if (f == "--tp")
        tps = headroom::parse_list(v);
      else if (f == "--out")
        out = v;
      else {
        std::fprintf(stderr, "engine_kernels: unknown flag %s\n", f.c_str());
        return 2;
      }
    }
    return headroom::run(prefill, repeat, tps, out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine_kernels: %s\n", e.what());
    return 2;
  }
}
