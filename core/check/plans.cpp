// See plans.hpp.
#include "core/check/plans.hpp"

#include <algorithm>
#include <utility>

#include "core/backends/fi_prefill_sm90.hpp"
#include "core/util/checked.hpp"
#include "core/util/error.hpp"

namespace headroom {

policy effective_policy(const check_case& c) {
  return has_mutant(c.mutants, "model-wide-heads") ? policy::model_wide : c.pol;
}

flashinfer_options fi_options_of(const check_case& c) {
  flashinfer_options o = c.flashinfer;
  if (has_mutant(c.mutants, "fi-graph-grid-unwritten")) o.exact_no_split_graph_grid = false;
  o.kv_dtype_bytes = kv_cache_bytes(c.model.kv_dtype, c.model.kv_cache);  // sizeof(DTypeKV): 1 for fp8
  o.o_dtype_bytes = dtype_bytes(c.model.kv_dtype);  // vLLM's o_data_type: the model's dtype
  return o;
}

flashinfer_options fi_options_of(const check_case& c, const rank_geometry& rg, const attention_group& ag) {
  flashinfer_options o = fi_options_of(c);
  // vLLM's builder reads window_left from its layers (all must agree): the first builder layer's.
  const std::string& first = ag.builder_layers.empty() ? ag.layers.front() : ag.builder_layers.front();
  for (const rank_layer& l : rg.layers)
    if (l.name == first) o.window_left = l.sliding_window > 0 ? l.sliding_window - 1 : -1;
  return o;
}

std::optional<int64_t> vllm_fa3_aot_window(const rank_geometry& rg) {
  std::optional<int64_t> window;
  for (const rank_layer& l : rg.layers) {
    const int64_t w = std::max<int64_t>(l.sliding_window, 0);
    if (window && *window != w) return std::nullopt;
    window = w;
  }
  return window.value_or(0);
}

grouping effective_grouping(const check_case& c) {
  if (has_mutant(c.mutants, "legacy-grouping")) return grouping::legacy;
  if (has_mutant(c.mutants, "proposer-first-layer")) return grouping::proposer;
  return c.grp;
}

namespace {

// FlashInfer sends decode requests (query length 1) to its decode wrapper, the rest to prefill.
std::pair<batch, batch> split_batch(const batch& b) {
  batch dec, pre;
  for (std::size_t i = 0; i < b.seq_lens.size(); ++i) {
    batch& to = b.query_lens[i] <= 1 ? dec : pre;
    to.seq_lens.push_back(b.seq_lens[i]);
    to.query_lens.push_back(b.query_lens[i]);
  }
  return {dec, pre};
}

}  // namespace

// FlashInfer's two wrappers on one step: decode requests to the CUDA-core decode plan, or with
// tensor cores to the prefill planner as one-row requests (uniform_q_len 1 under CUDA graphs, as
// the fixed planner takes it; 0 with the C10 mutant, as FlashInfer passes it today); the rest to
// the prefill planner, without CUDA graphs. The prefill planner is PrefillPlan, or where the
// wrapper's backend is fa3 PrefillSM90Plan, which takes the mask: vLLM's prefill wrapper plans
// causal, FlashInfer's tensor-core decode its one-row requests non-causal.
std::vector<planned_part> flashinfer_parts(const check_case& c, int64_t h, int64_t kv, int64_t hd,
                                           const batch& b, flashinfer_options o,
                                           const fi_wrapper_backends& wb) {
  const auto prefill_planner = [&](const batch& x, const flashinfer_options& ox, bool fa3,
                                   bool causal) -> any_plan {
    if (fa3) return plan_fi_prefill_sm90(h, kv, hd, x, ox, causal);
    return plan_fi_prefill(h, kv, hd, x, ox);
  };
  const auto [dec, pre] = split_batch(b);
  std::vector<planned_part> parts;
  if (dec.num_seqs() > 0 && o.tensor_core_decode) {
    flashinfer_options od = o;
    od.uniform_q_len = od.cuda_graph && od.exact_no_split_graph_grid ? 1 : 0;
    parts.push_back({prefill_planner(dec, od, wb.decode.fa3, false), dec});
  } else if (dec.num_seqs() > 0) {
    parts.push_back({plan_fi_decode(h, kv, hd, c.model.kv_dtype, dec, o), dec});
  }
  if (pre.num_seqs() > 0) {
    flashinfer_options op = o;
    op.cuda_graph = false;  // vLLM captures decode only: its prefill wrapper plans eagerly
    parts.push_back({prefill_planner(pre, op, wb.prefill.fa3, true), pre});
  }
  return parts;
}

namespace {

// The attention groups a dump describes, in its order, for the case's backend.
std::vector<attention_group> dumped_groups(const check_case& c, const registry& reg) {
  std::vector<attention_group> out;
  for (std::size_t i = 0; i < c.builders.size(); ++i) {
    const builder_dump& d = c.builders[i];
    if (d.be != c.be) continue;
    const std::string path = "builders[" + std::to_string(i) + "].layers";
    const rank_layer* first = reg.find(d.layers.front());
    if (!first)
      throw input_error("case", path + "[0]", "\"" + d.layers.front() + "\"", "no such attention layer");
    attention_group ag;
    ag.index = d.index;
    ag.kv_group = d.kv_group;
    ag.be = d.be;
    ag.spec = spec_of(*first, c.model.kv_dtype, c.block_size, c.model.kv_cache);
    ag.layers = d.layers;
    ag.builder_layers = d.layers;
    out.push_back(std::move(ag));
  }
  return out;
}

int64_t param(const builder_dump& d, const char* name) {
  return dumped_parameter(d, name, "case", "builders.");
}

// The dumped builder's plans: Triton's are fixed (its buffers at the dumped capacities); FlashInfer
// plans each step from the dumped parameters, as its wrappers do, and carves the parts out of the
// dumped float workspace (a "float_workspace" entry of the plan's buffers).
std::vector<planned_part> dumped_parts(const check_case& c, const rank_geometry& rg,
                                       const attention_group& ag, const builder_dump& d, const batch& b) {
  if (c.be == backend::triton) {
    triton_plan p = plan_triton(param(d, "num_heads_q"), param(d, "num_heads_kv"), param(d, "headdim"),
                                c.triton, c.engine);
    p.thr = param(d, "seq_threshold_3D");
    p.head_size_padded = param(d, "headdim_padded");
    p.int32_offsets = has_mutant(c.mutants, "int32-token-offsets");
    p.decode_tile = triton_decode_tile(c.model.kv_cache);
    for (const auto& m : mirror_buffers(d))
      for (auto& b : p.buffers)
        if (b.name == m.name) b.capacity_bytes = m.capacity_bytes;
    return {{std::move(p), b}};
  }
  if (c.be == backend::fa3) return {};  // as the mirror: C3 checks its metadata (apply_dumped_capacities)
  flashinfer_options o = fi_options_of(c, rg, ag);
  o.page_size = param(d, "page_size");
  o.cuda_graph = param(d, "use_cuda_graph") != 0;
  // Dumps from before these parameters plan with the file's flashinfer options.
  if (auto it = d.parameters.find("use_tensor_cores"); it != d.parameters.end())
    o.tensor_core_decode = it->second;
  if (auto it = d.parameters.find("disable_split_kv"); it != d.parameters.end())
    o.disable_split_kv = it->second;
  const int64_t h = param(d, "num_qo_heads"), kv = param(d, "num_kv_heads"), hd = param(d, "head_dim");
  std::vector<planned_part> parts = flashinfer_parts(c, h, kv, hd, b, o, fi_backends_of(c, rg, ag));
  for (auto& p : parts)
    std::visit(
        [&](auto& x) {
          for (const auto& m : mirror_buffers(d)) x.buffers.push_back({m.name, m.capacity_bytes, 1});
        },
        p.plan);
  return parts;
}

}  // namespace

engine make_engine(const check_case& c) {
  engine e;
  e.rg = to_rank(c.model, c.tp);
  e.reg = make_registry(e.rg);
  e.kv_groups = make_kv_cache_groups(e.reg, c.model.kv_dtype, c.block_size, c.hybrid, c.model.kv_cache);
  e.groups = c.builders.empty() ? make_attention_groups(e.kv_groups, e.reg, c.be, effective_grouping(c))
                                : dumped_groups(c, e.reg);
  return e;
}

const builder_dump* dump_of(const check_case& c, const attention_group& ag) {
  for (const auto& d : c.builders)
    if (d.be == ag.be && d.index == ag.index) return &d;
  return nullptr;
}

table_shape block_table_of(const check_case& c, const attention_group& ag) {
  if (const builder_dump* d = dump_of(c, ag))
    for (const auto& b : d->buffers)
      if (b.name == "block_table") return {b.shape.at(0), b.shape.at(1)};  // 2-D: builder_dump_from_json
  return {c.engine.max_num_seqs, block_table_width(c.engine, c.block_size)};
}

void apply_dumped_capacities(const check_case& c, const attention_group& ag,
                             std::vector<buffer_plan>& buffers) {
  const builder_dump* d = dump_of(c, ag);
  if (!d) return;
  for (const auto& m : mirror_buffers(*d))
    for (auto& b : buffers)
      if (b.name == m.name) b.capacity_bytes = m.capacity_bytes;
}

int64_t builder_kv_heads(const check_case& c, const rank_geometry& rg, const attention_group& ag) {
  const bool model_wide = c.be == backend::triton && has_mutant(c.mutants, "triton-model-kv-heads");
  return model_wide ? rg.model_wide_kv_heads : ag.spec.num_kv_heads;
}

int64_t builder_head_size(const check_case& c, const rank_geometry& rg, const attention_group& ag) {
  if (has_mutant(c.mutants, "head-dim-from-hidden") && c.model.hidden_size > 0)
    return std::max<int64_t>(1, c.model.hidden_size / c.model.num_attention_heads);
  const bool model_wide = c.be == backend::triton && has_mutant(c.mutants, "triton-model-head-size");
  return model_wide ? rg.head_size : ag.spec.head_size;
}

int64_t fi_builder_head_dim(const check_case& c, const rank_geometry& rg, const attention_group& ag) {
  const builder_dump* d = dump_of(c, ag);
  return d ? param(*d, "head_dim") : builder_head_size(c, rg, ag);
}

int64_t fi_builder_kv_heads(const check_case& c, const rank_geometry& rg, const attention_group& ag) {
  const builder_dump* d = dump_of(c, ag);
  return d ? param(*d, "num_kv_heads") : builder_kv_heads(c, rg, ag);
}

fi_wrapper_backends fi_backends_of(const check_case& c, const rank_geometry& rg, const attention_group& ag) {
  const builder_dump* d = dump_of(c, ag);
  const auto given = [&](const char* name) -> std::optional<fi_backend_choice> {
    if (!d) return std::nullopt;
    const auto it = d->parameters.find(name);
    if (it == d->parameters.end()) return std::nullopt;
    return fi_backend_choice{it->second != 0, std::string("the plan's ") + name};
  };
  fi_wrapper_backends wb = fi_wrapper_backends_of(c.flashinfer, c.model.kv_dtype,
                                                  fi_builder_head_dim(c, rg, ag), c.model.kv_cache);
  // A dump's own choice: fa3_prefill for both wrappers unless it gives the decode wrapper's.
  if (const auto prefill = given("fa3_prefill")) wb.prefill = wb.decode = *prefill;
  if (const auto decode = given("fa3_decode")) wb.decode = *decode;
  return wb;
}

std::optional<std::string> fa3_wrapper_of(const check_case& c) {
  if (c.be != backend::flashinfer) return std::nullopt;
  const engine e = make_engine(c);
  for (const attention_group& ag : e.groups) {
    const fi_wrapper_backends wb = fi_backends_of(c, e.rg, ag);
    const std::string where = "tp " + std::to_string(c.tp) + " group " + std::to_string(ag.index);
    if (wb.prefill.fa3) return where + " prefill (" + wb.prefill.reason + ")";
    if (c.flashinfer.tensor_core_decode && wb.decode.fa3)
      return where + " tensor-core decode (" + wb.decode.reason + ")";
  }
  return std::nullopt;
}

std::vector<planned_part> plan_parts(const check_case& c, const rank_geometry& rg, const attention_group& ag,
                                     int64_t builder_heads, const batch& b) {
  if (const builder_dump* dump = dump_of(c, ag)) return dumped_parts(c, rg, ag, *dump, b);
  const int64_t kv = builder_kv_heads(c, rg, ag);
  const int64_t d = builder_head_size(c, rg, ag);
  if (c.be == backend::fa3) return {};  // no FA3 attention body: its metadata is class C3's check
  if (c.be == backend::triton) {
    triton_plan p = plan_triton(builder_heads, kv, d, c.triton, c.engine);
    p.int32_offsets = has_mutant(c.mutants, "int32-token-offsets");
    p.decode_tile = triton_decode_tile(c.model.kv_cache);
    return {{std::move(p), b}};
  }
  std::vector<planned_part> parts =
      flashinfer_parts(c, builder_heads, kv, d, b, fi_options_of(c, rg, ag), fi_backends_of(c, rg, ag));
  // Every part checked against the wrappers' fixed int workspace and its page-locked copy, as the
  // dumped ones above: AlignedAllocator raises past it in DecodePlanImpl, PrefillPlanImpl and
  // PrefillSM90Plan alike (PrefillSM90Plan's grow with the heads, FA2's with the packed rows).
  for (auto& p : parts)
    std::visit(
        [](auto& x) {
          x.buffers.push_back({"int_workspace", fi_int_workspace_default, 1});
          x.buffers.push_back({"page_locked_int_workspace", fi_int_workspace_default, 1});
        },
        p.plan);
  return parts;
}

}  // namespace headroom
