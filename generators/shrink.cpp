// The domain shrinker: batch and option candidates, the size key, validity and greedy descent.
#include "generators/shrink.hpp"

#include <algorithm>
#include <set>

#include "core/engine/engine.hpp"
#include "core/util/error.hpp"
#include "generators/geometry_gen.hpp"
#include "generators/shrink_parts.hpp"

namespace headroom::generators {

namespace {

check_case with_requests(const check_case& c, const std::vector<std::size_t>& keep) {
  check_case o = c;
  o.b = {};
  for (std::size_t i : keep) {
    o.b.seq_lens.push_back(c.b.seq_lens[i]);
    o.b.query_lens.push_back(c.b.query_lens[i]);
  }
  return o;
}

std::vector<std::size_t> range(std::size_t from, std::size_t to) {
  std::vector<std::size_t> r;
  for (std::size_t i = from; i < to; ++i) r.push_back(i);
  return r;
}

void fewer_requests(const check_case& c, std::vector<check_case>& out) {
  const std::size_t n = c.b.seq_lens.size();
  if (n <= 1) return;
  for (std::size_t i = 0; i < n; ++i) out.push_back(with_requests(c, {i}));
  out.push_back(with_requests(c, range(0, n / 2)));
  out.push_back(with_requests(c, range(n / 2, n)));
  for (std::size_t i = n; i-- > 0;) {
    auto keep = range(0, n);
    keep.erase(keep.begin() + static_cast<std::ptrdiff_t>(i));
    out.push_back(with_requests(c, keep));
  }
}

// 1, then x - x/2, x - x/4, ..., x - 1: a failing length is found in logarithmically many steps.
std::vector<int64_t> smaller_values(int64_t x) {
  std::vector<int64_t> v = {1};
  for (int64_t d = x / 2; d >= 1; d /= 2)
    if (x - d > v.back()) v.push_back(x - d);
  if (x - 1 > v.back()) v.push_back(x - 1);
  while (!v.empty() && v.back() >= x) v.pop_back();
  return v;
}

void shorter_requests(const check_case& c, std::vector<check_case>& out) {
  for (std::size_t i = 0; i < c.b.seq_lens.size(); ++i) {
    const int64_t s = c.b.seq_lens[i], q = c.b.query_lens[i];
    for (int64_t q2 : smaller_values(q)) {
      check_case o = c;
      o.b.query_lens[i] = q2;
      out.push_back(std::move(o));
    }
    for (int64_t s2 : smaller_values(s))
      if (s2 >= 1 && s2 < s) {
        check_case o = c;
        o.b.seq_lens[i] = s2;
        o.b.query_lens[i] = std::min(q, s2);
        out.push_back(std::move(o));
      }
  }
}

// The C9 / C11 settings (generators/class_gen.hpp) away from their defaults.
int64_t class_options(const check_case& c) {
  const engine_settings d;
  return (c.engine.head_tile != d.head_tile) + (c.engine.mamba_block_size != d.mamba_block_size) +
         (c.engine.extra_group_block_size != d.extra_group_block_size) +
         (c.engine.max_model_len != d.max_model_len) + (c.model.hidden_size != 0) +
         c.flashinfer.tensor_core_decode + c.flashinfer.disable_split_kv;
}

int64_t non_default_options(const check_case& c) {
  const check_case d;
  return (c.hybrid != d.hybrid) + (c.block_size != d.block_size) +
         (c.flashinfer.cuda_graph != d.flashinfer.cuda_graph) +
         (c.flashinfer.page_size != d.flashinfer.page_size) +
         (c.triton.snap_to_capture != d.triton.snap_to_capture) +
         (c.triton.cap_max_num_seqs != d.triton.cap_max_num_seqs) + (c.engine.cg_mode != d.engine.cg_mode) +
         (c.engine.max_capture_size != d.engine.max_capture_size) +
         (c.engine.capture_sizes != d.engine.capture_sizes) +
         (c.engine.num_speculative_tokens != d.engine.num_speculative_tokens) +
         (c.model.kv_dtype != dtype::bf16) + (c.model.kv_cache != kv_quant::none) +
         c.flashinfer.trtllm_attention_off + (c.seed != 0) + class_options(c);
}

}  // namespace

void batch_candidates(const check_case& c, std::vector<check_case>& out) {
  fewer_requests(c, out);
  shorter_requests(c, out);
}

void option_candidates(const check_case& c, std::vector<check_case>& out) {
  const check_case d;
  auto push = [&](auto&& edit) {
    check_case o = c;
    edit(o);
    out.push_back(std::move(o));
  };
  // A smaller max_num_seqs lowers the default capture sizes and so Triton's snapped threshold;
  // other backends ignore the Triton options, which then go back to their defaults.
  if (c.engine.max_num_seqs > 1) {
    push([](check_case& o) { o.engine.max_num_seqs /= 2; });
    // Together with the requests past the new limit: a lower threshold and a shorter batch often
    // fail together where neither alone does.
    if (c.b.num_seqs() > c.engine.max_num_seqs / 2)
      push([](check_case& o) {
        o.engine.max_num_seqs /= 2;
        o.b.seq_lens.resize(static_cast<std::size_t>(o.engine.max_num_seqs));
        o.b.query_lens.resize(static_cast<std::size_t>(o.engine.max_num_seqs));
      });
  }
  if (c.be != backend::triton && c.triton != d.triton) push([&](check_case& o) { o.triton = d.triton; });
  if (c.hybrid != d.hybrid) push([](check_case& o) { o.hybrid = true; });
  if (c.flashinfer.cuda_graph) push([](check_case& o) { o.flashinfer.cuda_graph = false; });
  // An fp8 cache decodes on tensor cores (vLLM's only decode wrapper since v0.10.2; the CUDA-core
  // plan's occupancy under fp8 is not modelled): CUDA-core decode only once the cache is 16-bit.
  if (c.flashinfer.tensor_core_decode && c.model.kv_cache == kv_quant::none)
    push([](check_case& o) { o.flashinfer.tensor_core_decode = false; });
  if (c.flashinfer.trtllm_attention_off)
    push([](check_case& o) { o.flashinfer.trtllm_attention_off = false; });
  if (c.flashinfer.disable_split_kv) push([](check_case& o) { o.flashinfer.disable_split_kv = false; });
  if (c.block_size != 16 || c.flashinfer.page_size != 16)
    push([](check_case& o) { o.block_size = o.flashinfer.page_size = 16; });
  if (c.be == backend::triton && c.triton != d.triton) push([&](check_case& o) { o.triton = d.triton; });
  if (c.model.kv_dtype != dtype::bf16) push([](check_case& o) { o.model.kv_dtype = dtype::bf16; });
  if (c.model.kv_cache != kv_quant::none) push([](check_case& o) { o.model.kv_cache = kv_quant::none; });
  if (c.seed != 0) push([](check_case& o) { o.seed = 0; });
  if (c.engine.head_tile != 0) push([](check_case& o) { o.engine.head_tile = 0; });
  if (c.model.hidden_size != 0) push([](check_case& o) { o.model.hidden_size = 0; });
  if (c.engine.mamba_block_size != 0) push([](check_case& o) { o.engine.mamba_block_size = 0; });
  if (c.engine.extra_group_block_size != 0) push([](check_case& o) { o.engine.extra_group_block_size = 0; });
  if (c.engine.max_model_len != d.engine.max_model_len)
    push([&](check_case& o) { o.engine.max_model_len = d.engine.max_model_len; });
}

std::vector<int64_t> shrink_key(const check_case& c) {
  int64_t attention = 0, heads = c.model.num_attention_heads, kv = c.model.num_kv_heads;
  int64_t sizes = c.model.head_size, sliding = 0, seq = 0, q = 0;
  std::set<int64_t> distinct = {c.model.num_attention_heads};
  for (const auto& l : c.model.layers) {
    if (l.kind == attn_kind::none) continue;
    ++attention;
    heads += l.num_heads, kv += l.num_kv_heads, sizes += l.head_size + l.head_size_v;
    distinct.insert(l.num_heads);
    sliding += l.kind == attn_kind::sliding;
  }
  for (int64_t s : c.b.seq_lens) seq += s;
  for (int64_t x : c.b.query_lens) q += x;
  const int64_t triton_size =
      c.engine.max_num_seqs + (c.be != backend::triton && !(c.triton == check_case{}.triton));
  return {
      attention,    static_cast<int64_t>(c.model.layers.size()),   c.tp, c.b.num_seqs(), q,       seq,
      heads,        static_cast<int64_t>(distinct.size()),         kv,   sizes,          sliding, triton_size,
      step_size(c), non_default_options(c) + non_default_engine(c)};
}

bool is_valid(const check_case& c) {
  try {
    validate(c.model);
    validate(c.b, "", "batch");
    validate(c.engine, "", "engine.");
    validate_step(c, "", "");
    to_rank(c.model, c.tp);
    return true;
  } catch (const input_error&) {
    return false;
  }
}

std::vector<check_case> shrink_candidates(const check_case& c) {
  std::vector<check_case> all;
  model_candidates(c, all);
  option_candidates(c, all);
  step_candidates(c, all);
  batch_candidates(c, all);
  const auto key = shrink_key(c);
  std::vector<check_case> out;
  for (auto& x : all)
    if (shrink_key(x) < key && is_valid(x)) out.push_back(std::move(x));
  return out;
}

rc::Seq<check_case> shrink_seq(const check_case& c) { return rc::seq::fromContainer(shrink_candidates(c)); }

// After an accepted candidate the scan resumes at the same position of the new list (wrapping
// around) instead of from the top: the families before it rarely succeed twice in a row.
shrink_result shrink_greedy(const check_case& c, const std::function<bool(const check_case&)>& still_fails,
                            int max_evals, const std::function<bool(const check_case&)>& allowed) {
  shrink_result r{c, 0, 0};
  std::size_t start = 0;
  bool progress = true;
  while (progress && r.evals < max_evals) {
    progress = false;
    auto cands = shrink_candidates(r.c);
    if (allowed) std::erase_if(cands, [&](const check_case& x) { return !allowed(x); });
    for (std::size_t k = 0; k < cands.size() && r.evals < max_evals; ++k) {
      const std::size_t i = (start + k) % cands.size();
      ++r.evals;
      if (still_fails(cands[i])) {
        r.c = std::move(cands[i]);
        ++r.steps;
        start = i;
        progress = true;
        break;
      }
    }
  }
  return r;
}

check_case renumbered(const check_case& c) {
  check_case o = c;
  for (std::size_t i = 0; i < o.model.layers.size(); ++i) o.model.layers[i].name = layer_name(i);
  return o;
}

}  // namespace headroom::generators
