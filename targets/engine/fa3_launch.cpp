// fa3_launch.hpp: a headroom FA3 plan as the arguments of FA3's scheduler preparation.
#include "targets/engine/fa3_launch.hpp"

#include <cstring>
#include <stdexcept>

#include "kernels/fa3_scheduler.hpp"
#include "targets/engine/fa3_attention_inputs.hpp"

namespace headroom::engine {
namespace {

using nlohmann::json;

[[noreturn]] void refuse_fa3(const std::string& what) { throw std::invalid_argument("fa3 launch: " + what); }

}  // namespace

std::string fa3_unsupported(const fa3_plan& p) {
  if (p.sched_call.build != fa3_build::vllm_fork)
    return "the FA3 driver is built from vLLM's fork; this schedule is SGLang's (sgl-attn's layout)";
  return {};
}

std::string fa3_engine_args(const fa3_plan& p) {
  const fa3_call& c = p.sched_call;
  const fa3_window_size window = fa3_window_size_of(c.window);
  // vLLM's builder: causal=True, window_size (window - 1, 0) for a sliding layer, else (-1, -1).
  return json{{"fa3",
               {{"num_heads", c.q_heads},
                {"num_heads_k", c.kv_heads},
                {"headdim", c.head_size},
                {"headdim_v", fa3_head_size_v(c)},
                {"page_size", c.page_size},
                {"max_seqlen_q", c.max_query_len},
                {"max_seqlen_k", c.max_seq_len},
                {"window_left", window.left},
                {"window_right", window.right},
                {"num_splits", p.sched_splits},
                {"e4m3", c.e4m3},
                {"in_call", p.in_call},
                {"expect", {{"entries", p.sched.size()}, {"num_splits", p.sched_resolved}}}}}}
      .dump();
}

json fa3_scheduler_launch(const gpu::gpu_request& rq, const engine_arena& a) {
  if (rq.fam != gpu::family::fa3_scheduler) refuse_fa3("this run is another kernel family");
  const json args = rq.engine.empty() ? json::object() : json::parse(rq.engine);
  if (!args.contains("fa3")) refuse_fa3("the request carries no schedule call");
  fa3_scheduler_params p;
  if (rq.params.size() != sizeof(p)) refuse_fa3("params of the wrong size");
  std::memcpy(static_cast<void*>(&p), rq.params.data(), sizeof(p));
  json j = args.at("fa3");
  j["kernel"] = "fa3_prepare_scheduler";
  j["batch_size"] = p.batch;
  j["causal"] = true;
  j["at"] = {{"scheduler_metadata", arena_offset(rq, a, p.metadata.id, p.metadata.offset, "fa3 launch")},
             {"cu_seqlens_q", arena_offset(rq, a, p.query_start.id, p.query_start.offset, "fa3 launch")},
             {"seqused_k", arena_offset(rq, a, p.seq_lens.id, p.seq_lens.offset, "fa3 launch")}};
  if (j.contains("attention")) j["attention"] = fa3_attention_launch(j.at("attention"), rq, a);
  return j;
}

}  // namespace headroom::engine
