// SGLang's FA3 decode schedule for `headroom plan` (sglang_fa3_plan.hpp): the passes of
// fa3_sglang.hpp on the steps the check sweeps, and their text.
#include "core/check/sglang_fa3_plan.hpp"

#include <algorithm>

#include "core/engine/steps.hpp"

namespace headroom {
namespace {

// Why SGLang precomputes for no step under these settings (sglang_fa3_pass_of's conditions).
std::string disabled_reason(const engine_settings& s) {
  if (s.attn_tp_size > 1 || s.gathered_buffer) return "DP attention";
  if (s.attn_cp_size > 1) return "prefill context parallelism";
  if (s.two_batch_overlap) return "two-batch overlap";
  if (s.num_speculative_tokens > 0) return "speculative tokens (decode is verify and draft passes)";
  return "";
}

sglang_fa3_pass_row row_of(const engine_settings& s, const engine_step& st, sglang_fa3_pass pass,
                           const fa3_group& g, int64_t sched_keys, const std::vector<rank_layer>& layers) {
  const fa3_plan p = plan_fa3_sglang(s, st, pass, g);
  sglang_fa3_pass_row r{pass,
                        pass == sglang_fa3_pass::eager ? st.b.num_seqs() : st.graph_size,
                        sched_keys,
                        p.sched_resolved,
                        p.sched_dynamic_max,
                        p.sched.size(),
                        p.buffers[0].capacity_elems(),
                        {}};
  for (const rank_layer& l : layers) {
    const int64_t v = head_size_v_of(l);
    auto same = [&](const sglang_fa3_layer_run& x) {
      return x.q_heads == l.num_heads && x.kv_heads == l.num_kv_heads && x.head_size == l.head_size &&
             x.head_size_v == v;
    };
    if (auto it = std::find_if(r.runs.begin(), r.runs.end(), same); it != r.runs.end()) {
      ++it->layers;
      continue;
    }
    fa3_group run = g;
    run.run_q_heads = l.num_heads, run.run_kv_heads = l.num_kv_heads, run.run_head_size = l.head_size;
    run.run_head_size_v = v;
    const fa3_plan f = plan_fa3_sglang(s, st, pass, run);
    r.runs.push_back({l.num_heads, l.num_kv_heads, l.head_size, v, 1, f.run_resolved, f.run_size,
                      f.sched.size() != f.run_size,
                      f.run_resolved > 1 && f.sched_dynamic_max > f.run_resolved});
  }
  return r;
}

std::string run_text(const sglang_fa3_layer_run& x) {
  std::string s =
      "      " + std::to_string(x.layers) + " layer(s) of " + std::to_string(x.q_heads) + " heads, " +
      std::to_string(x.kv_heads) + " kv heads, head size " + std::to_string(x.head_size) +
      (x.head_size_v > 0 && x.head_size_v != x.head_size ? ", head size v " + std::to_string(x.head_size_v)
                                                         : std::string()) +
      ": run num_splits " + std::to_string(x.splits) + ", expects " + std::to_string(x.entries) + " entries";
  if (x.shape_fails) s += ": CHECK_SHAPE fails";
  if (x.out_accum_short) s += ": out_accum too short for the request's splits";
  return s + "\n";
}

}  // namespace

bool plans_sglang_fa3(const check_options& o) {
  return o.engine.flavour == engine_flavour::sglang &&
         std::find(o.backends.begin(), o.backends.end(), backend::fa3) != o.backends.end();
}

std::vector<sglang_fa3_rank_plan> sglang_fa3_plan(const model_geometry& m, const check_options& o) {
  engine_settings s = o.engine;
  s.max_num_seqs = o.max_num_seqs;
  std::vector<sglang_fa3_rank_plan> out;
  for (int64_t tp : o.tps) {
    const rank_geometry rg = to_rank(m, tp);
    sglang_fa3_rank_plan rp;
    rp.tp = tp;
    rp.q_heads = rg.model_wide_heads, rp.kv_heads = rg.model_wide_kv_heads, rp.head_size = rg.head_size;
    rp.page_size = o.block_size;
    rp.disabled = disabled_reason(s);
    std::vector<rank_layer> full;
    for (const rank_layer& l : rg.layers)
      if (l.kind != attn_kind::sliding && l.sliding_window == 0) full.push_back(l);
    rp.full_layers = static_cast<int64_t>(full.size());
    rp.sliding_layers = static_cast<int64_t>(rg.layers.size()) - rp.full_layers;
    fa3_group g{rp.q_heads, rp.kv_heads, rp.head_size, rp.page_size, 0};
    g.e4m3 = m.kv_cache == kv_quant::fp8_e4m3;
    if (rp.disabled.empty() && !full.empty()) {
      engine_settings eager = s;
      eager.cg_mode = cudagraph_mode::none;
      for (int64_t n : {int64_t{1}, s.max_num_seqs}) {
        const engine_step st = forward_step(eager, decode_batch(n, o.decode_seq_len));
        rp.passes.push_back(row_of(eager, st, sglang_fa3_pass::eager, g, o.decode_seq_len, full));
        if (s.max_num_seqs == 1) break;
      }
      if (const int64_t bs = max_capture_of(s); bs > 0 && has_full_graphs(s.cg_mode)) {
        const engine_step replay = forward_step(s, decode_batch(bs, o.decode_seq_len));
        if (sglang_fa3_pass_of(s, replay) == sglang_fa3_pass::replay)
          rp.passes.push_back(row_of(s, replay, sglang_fa3_pass::replay, g, s.max_model_len, full));
        const engine_step capture = realise_step(s, {step_kind::dummy, bs, true, 0}, {}, {});
        rp.passes.push_back(row_of(s, capture, sglang_fa3_pass::capture, g, 1, full));
      }
    }
    out.push_back(std::move(rp));
  }
  return out;
}

std::string sglang_fa3_plan_text(const std::vector<sglang_fa3_rank_plan>& plans) {
  std::string s;
  for (const auto& rp : plans) {
    s += "\ntp " + std::to_string(rp.tp) +
         ": SGLang fa3 decode schedule (FlashAttentionBackend; not vLLM's builder)\n";
    s += "  scheduled with the config's " + std::to_string(rp.q_heads) + " heads, " +
         std::to_string(rp.kv_heads) + " kv heads, head_dim " + std::to_string(rp.head_size) +
         " (no headdim_v: v taken as " + std::to_string(rp.head_size) + "), page size " +
         std::to_string(rp.page_size) + ", max_seqlen_q 1, causal=True, num_splits 0\n";
    s += "  given to " + std::to_string(rp.full_layers) + " non-sliding layer(s); " +
         std::to_string(rp.sliding_layers) + " sliding layer(s) schedule their own\n";
    if (!rp.disabled.empty()) s += "  no step precomputes one under " + rp.disabled + "\n";
    for (const auto& r : rp.passes) {
      const bool eager = r.pass == sglang_fa3_pass::eager;
      s += "    " + std::string(to_string(r.pass)) + (eager ? ", " : ", graph of ") +
           std::to_string(r.batch) + (eager ? " request(s)" : "") + ", max_seqlen_k " +
           std::to_string(r.sched_keys) + ": num_splits " + std::to_string(r.splits) +
           " (a request at most " + std::to_string(r.request_splits) + "), " + std::to_string(r.entries) +
           " metadata entries of " + std::to_string(r.buffer_entries) +
           (eager ? "" : " (persistent buffer)") + "\n";
      for (const auto& x : r.runs) s += run_text(x);
    }
    s += "  none made for extend, mixed, target verify and draft steps\n";
  }
  return s;
}

plan_file without_backend(plan_file p, backend be) {
  for (auto& r : p.ranks)
    r.groups.erase(
        std::remove_if(r.groups.begin(), r.groups.end(), [be](const builder_dump& d) { return d.be == be; }),
        r.groups.end());
  return p;
}

}  // namespace headroom
