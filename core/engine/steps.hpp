// Engine steps (docs/catalogue.md C3-C8): what the kernels and the metadata builders of one
// forward see, realised from the engine settings and the case's step_spec the way vLLM v1's model
// runner builds it. A scheduled step is padded to its CUDA graph's size (FULL graphs only; eager
// steps are not padded); a dummy run (the warm-up and capture of one graph size) invents its own
// requests; a speculative-decoding draft pass reshapes the verify pass's metadata. The historical
// wrong forms (mutants of core/check/mutants.hpp) come in as step_mutants, so the engine layer does
// not depend on the checker.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backends/batch.hpp"
#include "core/engine/settings.hpp"

namespace headroom {

struct step_mutants {
  bool dummy_num_reqs_tokens = false;     // a dummy run with num_reqs = num_tokens
  bool dummy_seq_lens_unclamped = false;  // a non-uniform dummy's seq_lens left at num_tokens
  bool draft_reuses_verify = false;       // one-token draft passes (0, >= 2) keep the verify's query_start
};

struct engine_step {
  step_spec spec;
  batch b;                           // requests with work: seq_lens, and query_lens from query_start
  int64_t num_reqs_padded = 0;       // metadata rows: b's requests, then padded rows (seq_len 0)
  std::vector<int64_t> query_start;  // num_reqs_padded + 1 entries, as the metadata holds them
  int64_t max_query_len = 0;         // the metadata's
  int64_t q_rows = 0;                // rows of q (and of the output) the kernels run with
  int64_t num_tokens = 0;            // tokens the step schedules before padding
  int64_t graph_size = 0;            // the FULL CUDA graph it replays or is captured as; 0: eager
  bool uniform_decode = false;       // every request has exactly 1 + k query tokens
};

// The step a case runs: `scheduled` is the case's batch (a forward step's requests, a draft pass's
// verify batch; a dummy run ignores it).
engine_step realise_step(const engine_settings& s, const step_spec& spec, const batch& scheduled,
                         const step_mutants& m);

// A scheduled step of `b`: padded to its FULL graph when one replays it (num_reqs =
// min(padded // (1 + k), max_num_seqs) for uniform decode, else min(padded, max_num_seqs)).
engine_step forward_step(const engine_settings& s, const batch& b);

// The dummy runs whose attention metadata the engine builds (FULL graphs and their warm-ups):
// under `full` every capture size as a mixed (non-uniform) dummy; under full_decode_only and
// full_and_piecewise the capture sizes s with q <= s <= q * max_num_seqs as uniform-decode dummies.
std::vector<step_spec> dummy_steps_of(const engine_settings& s);

// The persistent block table's width in blocks: cdiv(max_model_len, block_size), rounded up to a
// multiple of 128 // gcd(128, block_size) (a 128-token alignment, vLLM #50302).
int64_t block_table_width(const engine_settings& s, int64_t block_size);

}  // namespace headroom
