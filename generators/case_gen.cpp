// Case generators: engine options, then a geometry fit for the backend, then a batch fit for the
// geometry's Triton threshold and the simulator's budget.
#include "generators/case_gen.hpp"

#include <algorithm>
#include <ostream>

#include <nlohmann/json.hpp>

#include "generators/batch_gen.hpp"
#include "generators/class_gen.hpp"
#include "generators/engine_gen.hpp"
#include "generators/formula_gen.hpp"
#include "generators/geometry_gen.hpp"
#include "generators/pick.hpp"
#include "generators/shrink.hpp"

namespace headroom::generators {

namespace {

// Independent choices of a case; geometry and batch depend on them (gen::mapcat below).
struct options_draw {
  backend be = backend::triton;
  policy pol = policy::per_layer;
  grouping grp = grouping::heads;
  kv_layout layout = kv_layout::packed;
  bool hybrid = true;
  int64_t page = 16;
  bool cuda_graph = false;
  int64_t max_num_seqs = 256;
  bool snap = true;
  uint64_t seed = 0;
  class_draw classes;  // C9 / C11 settings (class_gen.hpp)
};

// A pinned value, or the draw from `choices`; max_num_seqs draws stay within a pinned
// max_num_batched_tokens (vLLM refuses more requests than tokens a step).
rc::Gen<int64_t> pinned_or(const std::optional<int64_t>& pinned, std::vector<std::pair<int, int64_t>> choices,
                           std::optional<int64_t> at_most = std::nullopt) {
  if (pinned) return rc::gen::just(*pinned);
  if (at_most) std::erase_if(choices, [&](const auto& c) { return c.second > *at_most; });
  if (choices.empty()) return rc::gen::just(*at_most);
  return weighted<int64_t>(choices);
}

rc::Gen<options_draw> option_draws(const case_profile& p) {
  using o = options_draw;
  const pinned_settings& pins = p.pins;
  if (!p.vary_options)
    return rc::gen::build<o>(
        rc::gen::set(&o::be, rc::gen::elementOf(p.backends)),
        rc::gen::set(&o::pol, rc::gen::elementOf(p.policies)),
        rc::gen::set(&o::grp, rc::gen::elementOf(p.groupings)),
        rc::gen::set(&o::layout, rc::gen::elementOf(p.kv_layouts)),
        rc::gen::set(&o::max_num_seqs,
                     pinned_or(pins.max_num_seqs, {{1, 4}, {1, 8}, {1, 16}}, pins.max_num_batched_tokens)),
        rc::gen::set(&o::seed, rc::gen::arbitrary<uint64_t>()));
  return rc::gen::build<o>(
      rc::gen::set(&o::be, rc::gen::elementOf(p.backends)),
      rc::gen::set(&o::pol, rc::gen::elementOf(p.policies)),
      rc::gen::set(&o::grp, rc::gen::elementOf(p.groupings)),
      rc::gen::set(&o::layout, rc::gen::elementOf(p.kv_layouts)),
      rc::gen::set(&o::hybrid, weighted<bool>({{5, true}, {1, false}})),
      rc::gen::set(&o::page, pinned_or(pins.block_size, {{6, 16}, {1, 8}, {1, 32}})),
      rc::gen::set(&o::cuda_graph, weighted<bool>({{4, false}, {1, true}})),
      // vLLM's --max-num-seqs caps Triton's threshold: small values keep decode batches short.
      // As users set it: 1 (latency runs), powers of two up to vLLM's default 256, and counts that
      // are not multiples of 4 or of an attention-TP size (SGLang's --max-running-requests 100).
      rc::gen::set(&o::max_num_seqs, pinned_or(pins.max_num_seqs,
                                               {{4, 1},
                                                {2, 2},
                                                {1, 3},
                                                {3, 4},
                                                {2, 5},
                                                {2, 6},
                                                {3, 8},
                                                {1, 12},
                                                {3, 16},
                                                {1, 20},
                                                {2, 32},
                                                {1, 48},
                                                {2, 64},
                                                {1, 100},
                                                {1, 128},
                                                {3, 256}},
                                               pins.max_num_batched_tokens)),
      rc::gen::set(&o::snap, weighted<bool>({{5, true}, {1, false}})),
      rc::gen::set(&o::classes, class_draws()), rc::gen::set(&o::seed, rc::gen::arbitrary<uint64_t>()));
}

check_case assemble(const options_draw& d, const sized_geometry& g, const case_profile& p) {
  // FlashInfer cases keep vLLM's hybrid KV-cache manager: without it a model mixing sliding and full
  // layers puts both behind one FlashInfer builder, which takes one window and refuses to start
  // (group_agreement): a configuration the engine rejects, not a sizing bug to search for.
  const bool hybrid = d.be == backend::flashinfer || d.hybrid;
  check_case c = make_case(g.model, g.tp, d.be, d.pol, d.grp, hybrid, d.page, d.seed);
  c.layout = d.layout;
  c.flashinfer.page_size = d.page;
  c.flashinfer.cuda_graph = d.cuda_graph;
  c.engine.max_num_seqs = d.max_num_seqs;
  c.triton.snap_to_capture = d.snap;
  c.mutants = p.mutants;
  apply(d.classes, c);
  pin(p.pins, c);
  return c;
}

rc::Gen<check_case> with_batch(rc::Gen<check_case> g, int64_t max_work) {
  return rc::gen::mapcat(g, [max_work](check_case c) {
    batch_limits lim;
    // Triton: up to one past its 3D threshold; the others: up to 9 requests, and no more than the
    // scheduler runs (the class checks skip a step of more than max_num_seqs requests).
    lim.max_decode_seqs =
        c.be == backend::triton ? triton_thr_of(c) : std::min<int64_t>(8, c.engine.max_num_seqs - 1);
    lim.token_cost = token_cost_of(c);
    lim.max_work = max_work;
    return rc::gen::map(batches(lim), [c](batch b) {
      check_case out = c;
      out.b = std::move(b);
      return out;
    });
  });
}

// The settings the class draws (class_gen.hpp) wrote, kept over a new draw of the engine's: the
// head tile, the Mamba and extra groups' block sizes, and a hybrid model's max_model_len (a pinned
// Mamba block size on a model without Mamba layers keeps the engine's draw).
void keep_class_settings(const check_case& from, engine_settings& to) {
  const engine_settings& e = from.engine;
  to.head_tile = e.head_tile;
  to.mamba_block_size = e.mamba_block_size;
  to.extra_group_block_size = e.extra_group_block_size;
  const auto& layers = from.model.layers;
  const bool mamba = std::any_of(layers.begin(), layers.end(), [](const auto& l) { return l.mamba_state; });
  if (mamba && e.mamba_block_size > 0) to.max_model_len = e.max_model_len;
}

// The engine's settings beside max_num_seqs, and a compression ratio on the first attention layer.
// Pinned settings stay: assemble wrote them into c.engine, and the draw takes them.
rc::Gen<check_case> with_engine(rc::Gen<check_case> g, const pinned_settings& pins) {
  return rc::gen::mapcat(g, [pins](check_case c) {
    return rc::gen::map(rc::gen::pair(engine_settings_for(c.engine.max_num_seqs, pins), compress_ratios()),
                        [c](const std::pair<engine_settings, int64_t>& x) {
                          check_case out = c;
                          out.engine = x.first;
                          keep_class_settings(c, out.engine);
                          for (auto& l : out.model.layers)
                            if (l.kind != attn_kind::none) {
                              l.compress_ratio = x.second;
                              break;
                            }
                          return out;
                        });
  });
}

// The case's step, and its batch made fit for it (a forward step when a verify batch of 1 + k
// tokens a request would pass the work budget).
rc::Gen<check_case> with_step(rc::Gen<check_case> g, int64_t max_work) {
  return rc::gen::mapcat(g, [max_work](check_case c) {
    return rc::gen::map(steps_for(c, max_work), [c, max_work](const step_spec& s) {
      check_case out = c;
      out.step = s;
      out.b = batch_for_step(out, out.b);
      if (batch_work(out.b, token_cost_of(out)) > max_work) out.step = {}, out.b = c.b;
      return out;
    });
  });
}

}  // namespace

int64_t triton_thr_of(const check_case& c) {
  const int64_t kv = kv_rank_of(c.model.num_kv_heads, c.tp);
  return triton_threshold(kv, c.triton, c.engine);
}

std::vector<int64_t> large_head_sizes_of(backend be) {
  switch (be) {
    case backend::flashinfer:
      return {128, 256, 512};
    case backend::fa3:
      return {80, 96, 128, 192, 256};
    case backend::triton:
      break;
  }
  return {80, 96, 128, 192, 256, 512};
}

int64_t token_cost_of(const check_case& c) {
  int64_t cost = 1;
  for (const auto& l : c.model.layers)
    if (l.kind != attn_kind::none) cost = std::max(cost, l.num_heads / c.tp * l.head_size);
  return cost;
}

rc::Gen<check_case> raw_cases(const case_profile& p) {
  if (p.formulas_only) {
    case_profile kernels = p;
    kernels.formulas_only = false;
    auto with_mutants = [p](rc::Gen<check_case> g) {
      return rc::gen::map(std::move(g), [p](check_case c) {
        c.mutants = p.mutants;
        pin(p.pins, c);
        return c;
      });
    };
    // The kernel regime's cases also draw what only the formulas judge (formula_gen.hpp).
    return rc::gen::weightedOneOf<check_case>({{9, with_formula_settings(raw_cases(kernels), p.pins)},
                                               {1, with_mutants(large_offset_cases(p.pins.tps))}});
  }
  auto with_geometry = rc::gen::mapcat(option_draws(p), [p](options_draw d) {
    geometry_limits lim;
    lim.max_layers = p.max_layers;
    lim.max_head_size = p.max_head_size;
    if (p.large_head_sizes) lim.large_head_sizes = large_head_sizes_of(d.be);
    lim.value_head_sizes = d.be == backend::fa3;
    if (p.pins.tps) lim.tps = *p.pins.tps;
    lim.flashinfer_groups = d.be == backend::flashinfer;
    return rc::gen::map(geometries(lim), [d, p](const sized_geometry& g) { return assemble(d, g, p); });
  });
  // Full size from the first case: RapidCheck's size ramp would spend most of a short budget on
  // one-layer, one-request cases; the shrinker makes failures small afterwards anyway.
  if (!p.vary_options || !p.engine_steps)
    return rc::gen::resize(100, rc::gen::noShrink(with_batch(with_geometry, p.max_work)));
  return rc::gen::resize(100, rc::gen::noShrink(with_step(
                                  with_batch(with_engine(with_geometry, p.pins), p.max_work), p.max_work)));
}

rc::Gen<check_case> cases(const case_profile& p) {
  return rc::gen::shrink(raw_cases(p), [](const check_case& c) { return shrink_seq(c); });
}

rc::Gen<check_case> large_cases(const std::vector<policy>& policies) {
  case_profile p;
  p.policies = policies;
  p.vary_options = false;
  auto g = rc::gen::mapcat(option_draws(p), [](options_draw d) {
    return rc::gen::map(large_geometries(), [d](const sized_geometry& g) { return assemble(d, g, {}); });
  });
  // Long sequences (up to 2^31 - 1 tokens) and up to 16 requests: the formulas only.
  auto long_len = rc::gen::element<int64_t>(1, 256, 4096, 1 << 20, (1LL << 31) - 1);
  return rc::gen::mapcat(g, [long_len](check_case c) {
    return rc::gen::map(rc::gen::mapcat(rc::gen::inRange<int64_t>(1, 17),
                                        [long_len](int64_t n) {
                                          return rc::gen::container<std::vector<int64_t>>(
                                              static_cast<std::size_t>(n), long_len);
                                        }),
                        [c](std::vector<int64_t> seqs) {
                          check_case out = c;
                          out.b.query_lens.assign(seqs.size(), 1);
                          out.b.seq_lens = std::move(seqs);
                          return out;
                        });
  });
}

check_case sample_case(const case_profile& p, uint64_t seed, uint64_t index) {
  // Mix seed and index (splitmix64 finaliser) so neighbouring indices are unrelated streams.
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return raw_cases(p)(rc::Random(z), 100).value();
}

}  // namespace headroom::generators

namespace headroom {

void showValue(const check_case& c, std::ostream& os) { os << to_json(c).dump(); }

}  // namespace headroom
