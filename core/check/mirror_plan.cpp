// The mirror's plan in the schema (headroom plan): per rank and backend, each attention group's
// builder as the engine would make it, with vLLM's and FlashInfer's names for what it allocates.
#include <algorithm>
#include <string>

#include "core/check/classes/classes.hpp"
#include "core/check/plan_file.hpp"
#include "core/check/plans.hpp"
#include "core/util/checked.hpp"

namespace headroom {
namespace {

// vLLM's FlashInfer float workspace (PR #48428): max(394 MiB, max_num_batched_tokens * H_b * D * 16).
inline constexpr int64_t fi_workspace_floor = int64_t{394} << 20;
// ... and under VLLM_BATCH_INVARIANT, which is what disables split-KV in vLLM's builder, a fixed
// 2 GiB (FLASHINFER_WORKSPACE_BUFFER_SIZE_BATCH_INVARIANT, _get_workspace_buffer).
inline constexpr int64_t fi_workspace_batch_invariant = int64_t{2048} << 20;

dumped_buffer fp32_buffer(const char* name, std::vector<int64_t> shape) {
  int64_t bytes = 4;
  for (int64_t d : shape) bytes = checked_mul(bytes, d, name);
  return {name, "float32", std::move(shape), bytes};
}

dumped_buffer int32_buffer(const char* name, int64_t entries) {
  return {name, "int32", {entries}, checked_mul(entries, 4, name)};
}

// The model runner's persistent block table of the group's KV-cache group, [max_num_seqs, width].
dumped_buffer block_table(const check_case& c) {
  const int64_t rows = c.engine.max_num_seqs, width = block_table_width(c.engine, c.block_size);
  return {"block_table", "int32", {rows, width}, checked_product("block_table", rows, width, 4)};
}

// PrefillSM90Plan's fields (the wrappers whose backend is fa3) for the largest batches the builder
// plans, as parameters named `prefix` + FlashInfer's field: decode, max_num_seqs one-row requests
// on tensor cores (the case's graphs); prefill (eager, causal), the step with the most query tiles
// within the engine's limits (fi_prefill_widest_step: check runs it too).
void add_sm90_fields(builder_dump& d, const std::string& prefix, int64_t heads, int64_t kv, int64_t hd,
                     const batch& b, const flashinfer_options& o, bool causal) {
  const fi_prefill_sm90_plan p = plan_fi_prefill_sm90(heads, kv, hd, b, o, causal);
  d.parameters[prefix + "batch"] = b.num_seqs();
  d.parameters[prefix + "tokens"] = b.num_tokens();
  d.parameters[prefix + "work_indptr_len"] = static_cast<int64_t>(p.work_indptr.size());
  d.parameters[prefix + "total_works"] = p.total_works;
  d.parameters[prefix + "allocated_works"] = p.allocated_works;
  d.parameters[prefix + "cta_tile_q"] = p.cta_tile_q;
  d.parameters[prefix + "same_schedule_for_all_heads"] = p.same_schedule_for_all_heads ? 1 : 0;
  d.parameters[prefix + "int_workspace_bytes"] = fi_int_workspace_bytes(p);
}

void add_sm90_plans(builder_dump& d, const check_case& c, const engine& e, const attention_group& ag,
                    int64_t heads, int64_t kv, int64_t hd, const fi_wrapper_backends& wb) {
  flashinfer_options o = fi_options_of(c, e.rg, ag);
  const int64_t seqs = c.engine.max_num_seqs;
  if (o.tensor_core_decode && wb.decode.fa3)
    add_sm90_fields(d, "sm90_decode_", heads, kv, hd, decode_batch(seqs, c.engine.max_model_len), o, false);
  const batch pre = fi_prefill_widest_step(c.engine, fi_sm90_cta_tile_q(hd));
  if (pre.num_seqs() == 0 || !wb.prefill.fa3) return;  // no request of 2 rows fits, or prefill plans on fa2
  o.cuda_graph = false;                                // vLLM's prefill wrapper plans eagerly
  add_sm90_fields(d, "sm90_prefill_", heads, kv, hd, pre, o, true);
}

builder_dump mirror_dump(const check_case& c, const engine& e, const attention_group& ag, int64_t heads) {
  builder_dump d;
  d.be = ag.be;
  d.index = ag.index;
  d.kv_group = ag.kv_group;
  d.layers = ag.layers;
  const int64_t kv = builder_kv_heads(c, e.rg, ag);
  const int64_t hd = builder_head_size(c, e.rg, ag);
  if (ag.be == backend::triton) {
    const triton_plan p = plan_triton(heads, kv, hd, c.triton, c.engine);
    d.parameters = {{"num_heads_q", heads},
                    {"num_heads_kv", kv},
                    {"headdim", hd},
                    {"headdim_padded", p.head_size_padded},
                    {"seq_threshold_3D", p.thr},
                    {"num_par_softmax_segments", triton_segments}};
    d.buffers = {fp32_buffer("softmax_segm_output", {p.thr, heads, triton_segments, p.head_size_padded}),
                 fp32_buffer("softmax_segm_max", {p.thr, heads, triton_segments}),
                 fp32_buffer("softmax_segm_expsum", {p.thr, heads, triton_segments}), block_table(c)};
    return d;
  }
  if (ag.be == backend::fa3) {  // vLLM's FlashAttention builder (FA3): persistent metadata only
    d.parameters = {{"num_heads_q", heads},
                    {"num_heads_kv", kv},
                    {"headdim", hd},
                    {"max_num_splits", has_full_graphs(c.engine.cg_mode) ? fa3_graph_max_splits : 0}};
    if (const int64_t cap = fa3_metadata_capacity(c.engine, fa3_mutants_of(c)); cap > 0)
      d.buffers.push_back(int32_buffer("scheduler_metadata", cap));
    d.buffers.push_back(int32_buffer("query_start_loc", c.engine.max_num_seqs + 1));
    d.buffers.push_back(int32_buffer("seq_lens", c.engine.max_num_seqs));
    d.buffers.push_back(block_table(c));
    return d;
  }
  d.parameters = {{"num_qo_heads", heads},
                  {"num_kv_heads", kv},
                  {"head_dim", hd},
                  {"page_size", c.flashinfer.page_size},
                  {"use_cuda_graph", c.flashinfer.cuda_graph ? 1 : 0},
                  {"use_tensor_cores", c.flashinfer.tensor_core_decode ? 1 : 0},
                  {"disable_split_kv", c.flashinfer.disable_split_kv ? 1 : 0}};
  const int64_t ws =
      c.flashinfer.disable_split_kv
          ? fi_workspace_batch_invariant
          : std::max(fi_workspace_floor,
                     checked_product("float workspace", c.engine.max_num_batched_tokens, heads, hd, 16));
  const int64_t rows = request_meta_rows(c.engine, request_mutants_of(c));
  d.buffers = {
      {"float_workspace_buffer", "uint8", {ws}, ws},
      {"int_workspace_buffer", "uint8", {fi_int_workspace_default}, fi_int_workspace_default},
      {"page_locked_int_workspace_buffer", "uint8", {fi_int_workspace_default}, fi_int_workspace_default},
      int32_buffer("paged_kv_indptr", rows + 1),
      int32_buffer("paged_kv_last_page_len", rows)};
  // The wrappers' backends: fa3 names both (fa3_prefill 1); auto writes what each resolved to.
  const fi_wrapper_backends wb = fi_backends_of(c, e.rg, ag);
  if (c.flashinfer.prefill_auto) {
    d.parameters["fa3_prefill"] = wb.prefill.fa3 ? 1 : 0;
    if (c.flashinfer.tensor_core_decode) d.parameters["fa3_decode"] = wb.decode.fa3 ? 1 : 0;
  } else if (c.flashinfer.prefill_sm90) {
    d.parameters["fa3_prefill"] = 1;
  }
  add_sm90_plans(d, c, e, ag, heads, kv, hd, wb);
  return d;
}

// What --flashinfer-prefill auto chose for the group's wrappers, and why.
std::string auto_choice_note(const check_case& c, const engine& e, const attention_group& ag) {
  const fi_wrapper_backends wb = fi_backends_of(c, e.rg, ag);
  const auto chose = [](const fi_backend_choice& b, const char* wrapper) {
    return std::string(b.fa3 ? "fa3" : "fa2") + " for " + wrapper + " (" + b.reason + ")";
  };
  std::string s = "flashinfer tp " + std::to_string(c.tp) + " group " + std::to_string(ag.index) +
                  ": --flashinfer-prefill auto chose " + chose(wb.prefill, "prefill");
  if (c.flashinfer.tensor_core_decode) s += ", " + chose(wb.decode, "tensor-core decode");
  return s;
}

// An fp8 cache's KV-cache groups: the spec's page bytes (vLLM's page_size_bytes) beside the model
// dtype's.
std::string fp8_cache_note(const check_case& c, const engine& e, std::size_t group) {
  const kv_spec& spec = e.kv_groups[group].spec;
  kv_spec unquantised = spec;
  unquantised.quant = kv_quant::none;
  return "kv cache tp " + std::to_string(c.tp) + " group " + std::to_string(group) + ": " +
         to_string(spec.quant) + " (1 byte an element; queries and outputs " + to_string(c.model.kv_dtype) +
         "), page_size_bytes " + std::to_string(page_size_bytes(spec)) + " (" + to_string(c.model.kv_dtype) +
         " cache: " + std::to_string(page_size_bytes(unquantised)) + ")";
}

}  // namespace

plan_file mirror_plan(const model_geometry& m, const check_options& o) {
  for (int64_t tp : o.tps) to_rank(m, tp);  // every bad tp before any work
  plan_file p;
  p.model = m;
  p.engine = o.engine;
  p.engine.max_num_seqs = o.max_num_seqs;
  p.block_size = o.block_size;
  p.hybrid = o.hybrid;
  p.layout = o.layout;
  p.flashinfer = o.flashinfer;
  for (int64_t tp : o.tps) {
    plan_rank r;
    r.tp = tp;
    for (backend be : o.backends) {
      check_case c = make_case(m, tp, be, o.pol, o.grp, o.hybrid, o.block_size, o.seed);
      c.engine = p.engine;
      c.mutants = o.mutants;
      c.triton = o.triton;
      c.flashinfer = o.flashinfer;
      const engine e = make_engine(c);
      if (be == o.backends.front() && m.kv_cache != kv_quant::none)
        for (std::size_t g = 0; g < e.kv_groups.size(); ++g) p.notes.push_back(fp8_cache_note(c, e, g));
      for (const auto& ag : e.groups) {
        const head_resolution hr =
            resolve_heads(e.reg, ag.builder_layers, effective_policy(c), e.rg.model_wide_heads);
        if (hr.disagreement) {
          p.notes.push_back(std::string(to_string(be)) + " tp " + std::to_string(tp) + " group " +
                            std::to_string(ag.index) + ": no builder (" + hr.message + ")");
          continue;
        }
        r.groups.push_back(mirror_dump(c, e, ag, hr.builder_heads));
        if (be == backend::flashinfer && c.flashinfer.prefill_auto)
          p.notes.push_back(auto_choice_note(c, e, ag));
      }
    }
    p.ranks.push_back(std::move(r));
  }
  return p;
}

}  // namespace headroom
