// Engine settings, compression ratios and steps (engine_gen.hpp).
#include "generators/engine_gen.hpp"

#include <algorithm>

#include "core/engine/steps.hpp"
#include "generators/batch_gen.hpp"
#include "generators/case_gen.hpp"
#include "generators/pick.hpp"

namespace headroom::generators {
namespace {

struct settings_draw {
  cudagraph_mode mode = cudagraph_mode::full_and_piecewise;
  int64_t max_model_len = 4096;
  int64_t k = 0;
  engine_flavour flavour = engine_flavour::vllm;
  int64_t attn_tp = 1;
  bool gathered = false;
  bool tbo = false;     // SGLang's two-batch overlap
  int64_t attn_cp = 1;  // SGLang's attention CP size: 3 divides no other factor of the alignment
  bool zigzag = false;  // SGLang's --cp-strategy zigzag (interleave, the default, when false)
  // 0: vLLM's default capture list; 1: one graph past the block table's rows (rows of at most
  // 128 tokens) and at least max_num_seqs tokens, so that its warm-up fills every row: 132, or
  // max_num_seqs rounded up to 12 (132 = 12 x 11: either stays a graph when sizes round up to
  // whole verify passes of 2, 3 or 4 tokens); 2: graphs up to the pool only; 3: a graph of one
  // request only; 4: the default list up to max_cudagraph_capture_size = max_num_seqs (no graph
  // of more tokens than requests: the largest batch max(max_num_seqs, largest graph) is
  // max_num_seqs, often not a multiple of 4)
  int list = 0;
};

engine_settings realise_settings(const settings_draw& d, int64_t max_num_seqs, const pinned_settings& pins) {
  engine_settings e;
  e.max_num_seqs = max_num_seqs;
  e.cg_mode = d.mode;
  e.max_model_len = d.max_model_len;
  e.num_speculative_tokens = d.k;
  e.flavour = d.flavour;
  if (d.flavour == engine_flavour::sglang) {
    e.attn_tp_size = d.attn_tp, e.gathered_buffer = d.gathered;
    e.two_batch_overlap = d.tbo, e.attn_cp_size = d.attn_cp;
    e.cp_zigzag = d.attn_cp > 1 && d.zigzag;  // a strategy only where CP is on
  }
  if (d.list == 1) {  // short rows, so that the dummy's work stays small
    e.max_model_len = std::min<int64_t>(d.max_model_len, 128);
    e.capture_sizes = {1, 2, std::max<int64_t>(132, (max_num_seqs + 11) / 12 * 12)};
  }
  if (d.list == 2) e.capture_sizes = {1, 2, max_num_seqs};
  if (d.list == 3) e.capture_sizes = {1};
  if (d.list == 4) e.max_capture_size = max_num_seqs;
  pin(pins, e);
  return e;
}

}  // namespace

rc::Gen<engine_settings> engine_settings_for(int64_t max_num_seqs, const pinned_settings& pins) {
  using d = settings_draw;
  const auto draws = rc::gen::build<d>(
      rc::gen::set(&d::mode, weighted<cudagraph_mode>({{4, cudagraph_mode::full_and_piecewise},
                                                       {5, cudagraph_mode::full},
                                                       {1, cudagraph_mode::full_decode_only},
                                                       {1, cudagraph_mode::piecewise},
                                                       {1, cudagraph_mode::none}})),
      rc::gen::set(&d::max_model_len, weighted<int64_t>({{4, 4096}, {2, 16}, {2, 100}, {1, 128}, {1, 1024}})),
      rc::gen::set(&d::k, weighted<int64_t>({{7, 0}, {1, 1}, {2, 2}, {1, 3}})),
      // A pinned flavour is the draw's, so that SGLang's attention TP and gather come with it.
      rc::gen::set(&d::flavour, pins.flavour ? rc::gen::just(*pins.flavour)
                                             : weighted<engine_flavour>({{6, engine_flavour::vllm},
                                                                         {4, engine_flavour::sglang},
                                                                         {2, engine_flavour::vllm_ascend}})),
      rc::gen::set(&d::attn_tp, rc::gen::element<int64_t>(1, 2, 4, 8)),
      rc::gen::set(&d::gathered, weighted<bool>({{2, false}, {1, true}})),
      rc::gen::set(&d::tbo, weighted<bool>({{4, false}, {1, true}})),
      rc::gen::set(&d::attn_cp, weighted<int64_t>({{6, 1}, {1, 2}, {1, 3}})),
      rc::gen::set(&d::list, weighted<int>({{5, 0}, {6, 1}, {4, 2}, {1, 3}, {8, 4}})),
      // Last, so that the fields above draw as they did before it was added.
      rc::gen::set(&d::zigzag, weighted<bool>({{1, false}, {1, true}})));
  return rc::gen::map(draws, [max_num_seqs, pins](const settings_draw& x) {
    return realise_settings(x, max_num_seqs, pins);
  });
}

rc::Gen<int64_t> compress_ratios() { return weighted<int64_t>({{6, 0}, {3, 4}, {1, 2}, {1, 8}}); }

rc::Gen<step_spec> steps_for(const check_case& c, int64_t max_work) {
  const engine_settings& e = c.engine;
  std::vector<std::pair<int, step_spec>> choices = {{4, step_spec{}}};
  std::vector<step_spec> dummies;
  for (const step_spec& s : dummy_steps_of(e))
    if (batch_work(realise_step(e, s, {}, {}).b, token_cost_of(c)) <= max_work) dummies.push_back(s);
  for (const step_spec& s : dummies)
    choices.push_back({s == dummies.back() ? 5 : 1, s});  // the largest graph most
  for (int64_t pass = 1; pass <= e.num_speculative_tokens; ++pass)
    choices.push_back({3, {step_kind::draft, 0, false, pass}});
  return weighted<step_spec>(choices);
}

batch batch_for_step(const check_case& c, batch b) {
  if (c.step.kind == step_kind::dummy) return decode_batch(1, 1);
  if (c.step.kind == step_kind::forward) return b;
  const int64_t q = 1 + c.engine.num_speculative_tokens;
  const auto n = static_cast<std::size_t>(std::min(b.num_seqs(), c.engine.max_num_seqs));
  b.seq_lens.resize(n);
  b.query_lens.assign(n, q);
  for (auto& len : b.seq_lens) len = std::max(std::min(len, c.engine.max_model_len), q);
  return b;
}

}  // namespace headroom::generators
