// RapidCheck generators of whole cases (docs/design.md): geometry + TP + backend + policy + grouping +
// engine options + batch + seed, sized so the simulator runs one in milliseconds. Shrinking is the
// domain shrinker of shrink.hpp (fewer layers, smaller and more uniform heads, shorter batches),
// attached to the generated value, so RapidCheck properties and the fuzzer shrink the same way.
// Also the non-RapidCheck entry point: sample a case from (seed, index).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <rapidcheck.h>

#include "core/check/case.hpp"
#include "generators/pinned.hpp"

namespace headroom::generators {

struct case_profile {
  std::vector<policy> policies = {policy::per_layer};
  std::vector<grouping> groupings = {grouping::heads};
  std::vector<backend> backends = {backend::triton, backend::flashinfer, backend::fa3};
  std::vector<kv_layout> kv_layouts = {kv_layout::separate, kv_layout::packed};
  int max_layers = 6;
  int64_t max_work = 1 << 21;  // batch_limits::max_work: bounds the simulator's time per case
  // Head sizes above 64 (large_head_sizes_of the case's backend), about one draw in six; none
  // above max_head_size.
  bool large_head_sizes = true;
  int64_t max_head_size = 512;
  bool vary_options = true;  // hybrid manager, CUDA graphs, page size, Triton thr options
  bool engine_steps = true;  // engine settings (engine_gen.hpp) and the case's step (with vary_options)
  // The formulas only (the model target): one case in ten from a regime no kernel can run here,
  // token offsets near 2^31 elements (large_offset_cases); the others also draw an fp8 cache and
  // vLLM's use_trtllm_attention (formula_gen.hpp), which no other target runs.
  bool formulas_only = false;
  mutant_set mutants;    // historical wrong formulas every case switches on
  pinned_settings pins;  // engine settings every case takes instead of drawing them (pinned.hpp)
};

// Cases without shrinking (the fuzzer samples these, then shrinks with shrink_greedy).
rc::Gen<check_case> raw_cases(const case_profile& p);
// Cases that shrink with shrink_candidates (for properties).
rc::Gen<check_case> cases(const case_profile& p);
// Index-overflow regime (model target only): huge heads and head sizes, long sequences.
rc::Gen<check_case> large_cases(const std::vector<policy>& policies);
// Token offsets near 2^31 (model target only, offset_cases.cpp): one Triton layer, one request of
// about 2^31 / (heads x head size) tokens, with and without the int32-token-offsets mutant; at TP 1,
// or at a TP size drawn from `tps` with the same heads per rank.
rc::Gen<check_case> large_offset_cases(const std::optional<std::vector<int64_t>>& tps = std::nullopt);

// The head sizes above 64 the generators draw for a backend, those real models use that the
// backend runs: vLLM's Triton backend any from 32 (80, 96, 128, 192, 256, 512), FlashInfer's
// kernels 128, 256 and 512 (DISPATCH_HEAD_DIM: 64, 128, 256, 512), FA3 up to 256 (80, 96, 128,
// 192, 256).
std::vector<int64_t> large_head_sizes_of(backend be);

// Deterministic sample: the same (profile, seed, index) always gives the same case.
check_case sample_case(const case_profile& p, uint64_t seed, uint64_t index);

// Triton's 3D threshold for a case's attention groups (kv from the group spec or model-wide).
int64_t triton_thr_of(const check_case& c);
// Widest layer's heads x head size per rank: the cost of one KV token for one query.
int64_t token_cost_of(const check_case& c);

}  // namespace headroom::generators

namespace headroom {
// RapidCheck shows a case (found by argument-dependent lookup) as its one-line JSON, so a shrunk
// counterexample in a failure message is a replayable case file.
void showValue(const check_case& c, std::ostream& os);
}  // namespace headroom
