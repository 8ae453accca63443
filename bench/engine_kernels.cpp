// engine_kernels: the engines' own decode kernels (vLLM's Triton unified attention, FlashInfer's
// CUDA-core batch decode) timed on the engine target's guarded arena, at Laguna XS.2's two layer
// geometries (full layers 48 query heads, sliding 64, both timed without the window; 8 kv heads;
// head size 128) per TP, bf16,
// 16-token pages, over batch x context 1x32768, 16x4096 (two of the shapes bench_gpu_decode times
// headroom's bodies on; its geometry is the sliding layers' at TP 1), 32x2048 and 128x512.
// Each plan is the fixed mirror's (the buffers the engine allocates for that group); each figure
// is the median of --repeat launches, each after an L2 flush, timed by the engine's driver with CUDA
// events. Bytes/s count every KV byte once, q and the output.
//   engine_kernels [--repeat N] [--tp 1,2,4,8] [--out FILE.json]
// Needs the engine worker's drivers (HEADROOM_VLLM_DIR; a build with -DHEADROOM_FLASHINFER_DIR);
// an engine whose driver is not up is left out. Prints a markdown table. Not a ctest.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"
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
// At most 2^26 KV elements a layer (the host builds the arena image, as for the simulator's inputs).
constexpr shape shapes[] = {{1, 32768}, {16, 4096}, {32, 2048}, {128, 512}};
constexpr int64_t head_size = 128, page = 16;

struct figure {
  std::string engine, layers;
  int64_t tp, heads, kv_heads, batch, len;
  double ms = 0, tbps = 0;
  std::string error;
};

// The median time of `engine`'s kernel on one decode step of a layer of H query and KV kv heads.
figure time_one(gpu::worker_process& w, const std::string& engine, const rank_layer& l, const shape& s,
                int repeat) {
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
  const batch b = decode_batch(s.batch, s.len);
  flashinfer_options fo;
  fo.page_size = page;
  const any_plan plan =
      engine == "flashinfer"
          ? any_plan{plan_fi_decode(l.num_heads, l.num_kv_heads, head_size, dtype::bf16, b, fo)}
          : any_plan{
                plan_triton(l.num_heads, l.num_kv_heads, head_size, triton_options{}, engine_settings{})};
  const run_request r{&l, dtype::bf16, page, &plan, &b, 1, nullptr, 0, 0, kv_layout::packed};
  gpu::call_result c;
  try {  // a layer too large for the host's arena image, a worker that cannot start
    gpu::gpu_request rq = make_gpu_request(r, nullptr);
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
  const double kv = 2.0 * s.batch * s.len * l.num_kv_heads * head_size * 2;
  const double q_out = 2.0 * s.batch * l.num_heads * head_size * 2;
  f.tbps = (kv + q_out) / (f.ms * 1e-3) * 1e-12;
  return f;
}

std::vector<int64_t> parse_list(const std::string& s) {
  std::vector<int64_t> v;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');) v.push_back(std::stoll(x));
  return v;
}

int run(int repeat, const std::vector<int64_t>& tps, const std::string& out) {
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
  std::printf(
      "| engine | layers | TP | Hq / Hkv | batch x context | ms | TB/s |\n|---|---|---|---|---|---|---|\n");
  for (const int64_t tp : tps)
    for (const auto& [kind, heads] :
         {std::pair{attn_kind::full, int64_t{48}}, std::pair{attn_kind::sliding, int64_t{64}}}) {
      // No window: every figure reads the whole context, so the bytes counted are the bytes read.
      const rank_layer l{"layer", kind, heads / tp, 8 / tp, head_size, head_size, 0, 0};
      for (const auto& s : shapes)
        for (const auto& e : engines) {
          figure f = time_one(w, e, l, s, repeat);
          f.tp = tp;
          std::printf("| %s | %s | %lld | %lld / %lld | %lldx%lld | %s | %.2f |\n", e.c_str(),
                      f.layers.c_str(), (long long)tp, (long long)f.heads, (long long)f.kv_heads,
                      (long long)s.batch, (long long)s.len,
                      f.error.empty() ? std::to_string(f.ms).c_str() : f.error.c_str(), f.tbps);
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
                   {"tbps", f.tbps},
                   {"error", f.error}});
    std::ofstream(out) << j.dump(1) << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace headroom

int main(int argc, char** argv) {
  int repeat = 30;
  std::vector<int64_t> tps = {1, 2, 4, 8};
  std::string out;
  try {
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string f = argv[i], v = argv[i + 1];
      if (f == "--repeat")
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
    return headroom::run(repeat, tps, out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine_kernels: %s\n", e.what());
    return 2;
  }
}
