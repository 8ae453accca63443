// The sizing formulas as an executor: what a run touches is what the model says it needs.
#include <string>
#include <variant>

#include "core/check/executor.hpp"
#include "core/util/error.hpp"
#include "core/util/names.hpp"

namespace headroom {

namespace {
constexpr name_table<target_kind, 4> target_names = {{{target_kind::model, "model"},
                                                      {target_kind::sim, "sim"},
                                                      {target_kind::gpu, "gpu"},
                                                      {target_kind::engine, "engine"}}};
}  // namespace

const char* to_string(target_kind t) { return name_in(target_names, t, "unknown"); }

void refuse_model_only_plan(const run_request& r, target_kind target) {
  if (r.plan && std::holds_alternative<fi_prefill_sm90_plan>(*r.plan))
    throw input_error(std::string("target ") + to_string(target), "plan",
                      "PrefillSM90Plan (--flashinfer-prefill fa3)", "judged by --target model only");
}

observation model_observation(const any_plan& plan, const rank_layer& layer, const batch& b, dtype kv_dtype) {
  observation o;
  std::visit(
      [&](const auto& p) {
        using plan_t = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<plan_t, triton_plan>) {
          o.touched = triton_needs(p, layer, b);
        } else if constexpr (std::is_same_v<plan_t, fi_decode_plan>) {
          o.touched = fi_decode_needs(p, layer, kv_dtype);
        } else if constexpr (std::is_same_v<plan_t, fi_prefill_plan>) {
          auto run = fi_prefill_needs(p, layer, b);
          o.touched = run.needs;
          o.rows_never_computed = run.rows_never_computed;
          if (p.block_valid_mask.empty() && p.padded_batch_size > p.new_batch_size)
            o.worklist_uninitialized_reads = o.uninitialized_reads =
                3 * (p.padded_batch_size - p.new_batch_size) * layer.num_kv_heads;
        } else if constexpr (std::is_same_v<plan_t, fi_prefill_sm90_plan>) {
          // No float scratch (it never splits the kv); its int workspace parts are checked with the
          // plan (plan_runs.cpp), not per layer.
        } else if constexpr (std::is_same_v<plan_t, fa3_plan>) {
          o.touched = fa3_needs(p);
        } else if constexpr (std::is_same_v<plan_t, request_meta_plan>) {
          o.touched = request_meta_needs(p);
        } else if constexpr (std::is_same_v<plan_t, mqa_meta_plan>) {
          o.touched = mqa_meta_needs(p);
        } else {
          o.touched = {{"probe_offset", 8, 1}};
          o.index_overflows = token_offset_wraps(p, layer) ? 1 : 0;
        }
      },
      plan);
  return o;
}

observation model_executor::run(const run_request& r) {
  return model_observation(*r.plan, *r.layer, *r.b, r.kv_dtype);
}

}  // namespace headroom
