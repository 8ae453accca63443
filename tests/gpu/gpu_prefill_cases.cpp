// The prefill lane's random cases (gpu_cases.hpp, random_prefill_case).
#include <algorithm>

#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"
#include "tests/gpu/case_draw.hpp"
#include "tests/gpu/gpu_cases.hpp"

namespace headroom::gpu_test {
namespace {

constexpr const char* kinds[] = {"fi-prefill", "triton-mixed", "fi-mixed", "fi-tc-decode"};

// Requests: prefill ones of 2..80 query tokens after a context of 0..300 (one in four a long
// context, past a kv chunk), and with `decodes` some one-token requests.
batch draw_batch(draw& d, bool prefills, bool decodes) {
  batch b;
  const int64_t n = 1 + d.below(4);
  for (int64_t i = 0; i < n; ++i) {
    const bool decode = decodes && (!prefills || d.below(2) == 0);
    const int64_t q = decode ? 1 : 2 + d.below(79);
    const int64_t ctx = d.below(4) == 0 ? 100 + d.below(500) : d.below(40);
    b.query_lens.push_back(q);
    b.seq_lens.push_back(q + ctx);
  }
  return b;
}

flashinfer_options options_of(const owned_case& c) {
  flashinfer_options o;
  o.page_size = c.block_size;
  o.window_left = c.layer.sliding_window > 0 ? c.layer.sliding_window - 1 : -1;
  o.kv_dtype_bytes = o.o_dtype_bytes = dtype_bytes(c.dt);
  return o;
}

void make_plan(owned_case& c, draw& d, int kind) {
  const int64_t kv = c.layer.num_kv_heads, hd = c.layer.head_size;
  flashinfer_options o = options_of(c);
  switch (kind) {
    case 0:  // FlashInfer prefill
      c.b = draw_batch(d, true, false);
      c.plan = plan_fi_prefill(c.builder_heads, kv, hd, c.b, o);
      break;
    case 1: {  // Triton-style 2D over a mixed step
      c.b = draw_batch(d, true, true);
      engine_settings e;
      e.max_num_seqs = 16;
      c.plan = plan_triton(c.builder_heads, kv, hd, triton_options{}, e);
      break;
    }
    case 2:  // FlashInfer's prefill kernel over a mixed step
      c.b = draw_batch(d, true, true);
      c.plan = plan_fi_prefill(c.builder_heads, kv, hd, c.b, o);
      break;
    default: {  // tensor-core decode under a CUDA graph
      c.b = draw_batch(d, false, true);
      o.cuda_graph = true;
      o.disable_split_kv = d.below(2) == 0;
      o.exact_no_split_graph_grid = d.below(2) == 0;  // off: the pre-fix grid (C10)
      o.uniform_q_len = o.exact_no_split_graph_grid ? 1 : 0;
      c.plan = plan_fi_prefill(c.builder_heads, kv, hd, c.b, o);
      if (o.disable_split_kv && !o.exact_no_split_graph_grid) c.kind += "+c10";
      break;
    }
  }
}

}  // namespace

owned_case random_prefill_case(uint64_t seed, uint64_t index, bool want_overflow) {
  draw d{splitmix64{(seed ^ 0x5EEDu) * 0x9E3779B97F4A7C15ull + index}};
  owned_case c;
  const int kind = static_cast<int>(d.below(4));
  c.kind = kinds[kind];
  draw_layer(c, d, index, [&] { return 1 + d.below(8); });
  const int64_t g = c.layer.num_heads / c.layer.num_kv_heads;
  c.builder_heads = c.layer.num_kv_heads * d.builder_group(g, want_overflow);
  make_plan(c, d, kind);
  model_executor model;
  c.model_overflow = !overflowing_buffers(c, model.run(c.request())).empty();
  return c;
}

}  // namespace headroom::gpu_test
