// Shrink candidates of a case's engine settings and step (docs/catalogue.md C3-C8): the step toward
// a scheduled forward, a dummy run toward a smaller graph, a draft pass toward the first, fewer
// speculative tokens, and every other setting back to vLLM's default. Candidates that break a
// step's validity are dropped by shrink_candidates (is_valid).
#include <algorithm>

#include "core/engine/steps.hpp"
#include "generators/shrink_parts.hpp"

namespace headroom::generators {

void step_candidates(const check_case& c, std::vector<check_case>& out) {
  const engine_settings d;
  auto push = [&](auto&& edit) {
    check_case o = c;
    edit(o);
    out.push_back(std::move(o));
  };
  if (c.step.kind != step_kind::forward) push([](check_case& o) { o.step = {}; });
  if (c.step.kind == step_kind::dummy)
    for (const step_spec& s : dummy_steps_of(c.engine))
      if (s.tokens < c.step.tokens) push([&](check_case& o) { o.step = s; });
  if (c.step.kind == step_kind::draft && c.step.pass > 1) push([](check_case& o) { --o.step.pass; });
  if (c.engine.num_speculative_tokens > 0) push([](check_case& o) { --o.engine.num_speculative_tokens; });
  const engine_settings& e = c.engine;
  auto sglang_defaults = [&](check_case& o) {
    o.engine.attn_tp_size = d.attn_tp_size, o.engine.gathered_buffer = d.gathered_buffer;
    o.engine.req_pool_size = d.req_pool_size;
    o.engine.two_batch_overlap = d.two_batch_overlap, o.engine.attn_cp_size = d.attn_cp_size;
    o.engine.cp_zigzag = d.cp_zigzag;
  };
  const bool sglang_set = e.attn_tp_size != d.attn_tp_size || e.gathered_buffer || e.req_pool_size != 0 ||
                          e.two_batch_overlap || e.attn_cp_size != d.attn_cp_size || e.cp_zigzag;
  if (e.flavour != d.flavour || sglang_set)
    push([&](check_case& o) {
      o.engine.flavour = d.flavour;
      sglang_defaults(o);
    });
  if (e.flavour != d.flavour && sglang_set) push(sglang_defaults);  // the flavour kept (a fuzz pin)
  // SGLang's default CP strategy (interleave) alone, the CP size kept (a pinned one, or one the
  // failure needs).
  if (e.cp_zigzag) push([](check_case& o) { o.engine.cp_zigzag = false; });
  if (e.cg_mode != d.cg_mode) push([&](check_case& o) { o.engine.cg_mode = d.cg_mode; });
  if (!e.capture_sizes.empty()) push([](check_case& o) { o.engine.capture_sizes.clear(); });
  if (e.max_capture_size != d.max_capture_size)
    push([&](check_case& o) { o.engine.max_capture_size = d.max_capture_size; });
  if (e.max_model_len != d.max_model_len)
    push([&](check_case& o) { o.engine.max_model_len = d.max_model_len; });
  for (std::size_t i = 0; i < c.model.layers.size(); ++i)
    if (c.model.layers[i].compress_ratio > 0)
      push([i](check_case& o) { o.model.layers[i].compress_ratio = 0; });
}

int64_t step_size(const check_case& c) {
  const int64_t step = c.step.kind == step_kind::dummy   ? 1 + c.step.tokens
                       : c.step.kind == step_kind::draft ? 1 + c.step.pass
                                                         : 0;
  return step + c.engine.num_speculative_tokens;
}

int64_t non_default_engine(const check_case& c) {
  const engine_settings d;
  const engine_settings& e = c.engine;
  int64_t n = (e.flavour != d.flavour) + (e.attn_tp_size != d.attn_tp_size) + e.gathered_buffer +
              e.two_batch_overlap + (e.attn_cp_size != d.attn_cp_size) + e.cp_zigzag +
              (e.req_pool_size != d.req_pool_size) + (e.max_model_len != d.max_model_len);
  for (const auto& l : c.model.layers) n += l.compress_ratio > 0;
  return n;
}

}  // namespace headroom::generators
