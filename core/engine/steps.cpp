// Engine steps: vLLM v1's padding at replay (CudagraphDispatcher._create_padded_batch_descriptor),
// its dummy runs (GPUModelRunner._dummy_run) and the EAGLE proposer's draft passes
// (llm_base_proposer.propose), as docs/catalogue.md states them.
#include "core/engine/steps.hpp"

#include <algorithm>
#include <numeric>

#include "core/util/checked.hpp"

namespace headroom {
namespace {

// Metadata rows for the requests of b, then `padded - b` zero-length rows whose query_start
// repeats the last cumulative value (vLLM pads this way).
void fill_metadata(engine_step& st, int64_t padded) {
  st.num_reqs_padded = std::max(padded, st.b.num_seqs());
  st.query_start.assign(1, 0);
  for (int64_t q : st.b.query_lens) st.query_start.push_back(st.query_start.back() + q);
  st.query_start.resize(static_cast<std::size_t>(st.num_reqs_padded + 1), st.query_start.back());
  st.max_query_len = st.b.max_query_len();
  st.num_tokens = st.b.num_tokens();
}

bool is_uniform_decode(const batch& b, int64_t q) {
  return b.num_seqs() > 0 &&
         std::all_of(b.query_lens.begin(), b.query_lens.end(), [q](int64_t x) { return x == q; });
}

// A capture size that graphs the shape: uniform decode under a FULL decode mode, mixed batches
// under FULL; 0 when the step runs eagerly (or under a PIECEWISE graph, which builds no metadata
// for its size).
int64_t full_graph_size(const engine_settings& s, int64_t tokens, bool uniform) {
  const bool full = uniform ? has_full_graphs(s.cg_mode) : full_for_mixed_batches(s.cg_mode);
  return full ? padded_graph_size(s, tokens) : 0;
}

engine_step dummy_step(const engine_settings& s, const step_spec& spec, const step_mutants& m) {
  const int64_t q = 1 + s.num_speculative_tokens, n = spec.tokens;
  engine_step st;
  st.spec = spec;
  std::vector<int64_t> tokens;
  if (m.dummy_num_reqs_tokens) {  // before vLLM #19171: one row per token
    tokens.assign(static_cast<std::size_t>(n), 1);
  } else if (spec.uniform) {
    const int64_t reqs = std::min(s.max_num_seqs, ceil_div(n, q));
    tokens.assign(static_cast<std::size_t>(reqs), q);
    if (n % q != 0) tokens.back() = n % q;
  } else {
    const int64_t reqs = std::min(n, s.max_num_seqs);
    tokens.assign(static_cast<std::size_t>(reqs), n / reqs);
    tokens.back() += n % reqs;
  }
  // Every dummy request is max_query_len long: q for uniform decode, num_tokens otherwise; the
  // fix clamps it to max_model_len (vLLM #53671, open at the time of writing).
  const int64_t max_q = spec.uniform ? q : n;
  const int64_t len = m.dummy_seq_lens_unclamped ? max_q : std::min(max_q, s.max_model_len);
  for (int64_t t : tokens) {
    st.b.seq_lens.push_back(len);
    st.b.query_lens.push_back(std::min(t, len));  // a request never has more new tokens than its length
  }
  fill_metadata(st, st.b.num_seqs());
  st.q_rows = n;
  st.graph_size = full_graph_size(s, n, spec.uniform);
  st.uniform_decode = spec.uniform;
  return st;
}

// Draft pass p after a verify pass of 1 + k tokens for each request of `verify`. Pass 1 reuses the
// verify metadata (q holds the target's tokens); passes 2..k run one token per request:
// query_start = [0, 1, .., B], max_query_len 1, seq_lens one longer per pass (no token rejected:
// the longest case), clamped to max_model_len as the proposer does. Pass 0, the drafter's dummy
// pass after the verify pass of a FULL graph capture, has the one-token shape at the verify's
// seq_lens (vllm-musa #198).
engine_step draft_step(const engine_settings& s, const step_spec& spec, const batch& verify,
                       const step_mutants& m) {
  const int64_t q = 1 + s.num_speculative_tokens, B = verify.num_seqs();
  engine_step st;
  st.spec = spec;
  const bool first = spec.pass == 1;
  for (int64_t verify_len : verify.seq_lens) {
    const int64_t len = std::max(verify_len, q);  // a verify pass of q tokens is at least q long
    const int64_t grown = spec.pass >= 2 ? std::min(len + spec.pass - 1, s.max_model_len) : len;
    st.b.seq_lens.push_back(std::max(grown, len));
    st.b.query_lens.push_back(first || m.draft_reuses_verify ? q : 1);
  }
  fill_metadata(st, B);
  st.q_rows = first ? B * q : B;
  st.graph_size = full_graph_size(s, st.q_rows, true);
  st.uniform_decode = true;
  return st;
}

}  // namespace

engine_step forward_step(const engine_settings& s, const batch& b) {
  const int64_t q = 1 + s.num_speculative_tokens;
  engine_step st;
  st.b = b;
  st.uniform_decode = is_uniform_decode(b, q);
  st.graph_size = full_graph_size(s, b.num_tokens(), st.uniform_decode);
  const int64_t padded = st.graph_size == 0  ? b.num_seqs()
                         : st.uniform_decode ? std::min(st.graph_size / q, s.max_num_seqs)
                                             : std::min(st.graph_size, s.max_num_seqs);
  fill_metadata(st, padded);
  st.q_rows = st.graph_size > 0 ? st.graph_size : st.num_tokens;
  return st;
}

engine_step realise_step(const engine_settings& s, const step_spec& spec, const batch& scheduled,
                         const step_mutants& m) {
  switch (spec.kind) {
    case step_kind::dummy:
      return dummy_step(s, spec, m);
    case step_kind::draft:
      return draft_step(s, spec, scheduled, m);
    case step_kind::forward:
      break;
  }
  return forward_step(s, scheduled);
}

std::vector<step_spec> dummy_steps_of(const engine_settings& s) {
  const int64_t q = 1 + s.num_speculative_tokens;
  std::vector<step_spec> out;
  for (int64_t size : capture_sizes_of(s)) {
    if (full_for_mixed_batches(s.cg_mode)) out.push_back({step_kind::dummy, size, false, 0});
    if (full_for_decode(s.cg_mode) && size >= q && size <= q * s.max_num_seqs)
      out.push_back({step_kind::dummy, size, true, 0});
  }
  return out;
}

int64_t block_table_width(const engine_settings& s, int64_t block_size) {
  const int64_t align = 128 / std::gcd<int64_t>(128, block_size);
  return ceil_div(ceil_div(s.max_model_len, block_size), align) * align;
}

}  // namespace headroom
