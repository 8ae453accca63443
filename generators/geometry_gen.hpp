// RapidCheck generators of valid model geometries (docs/engines.md §2): layer counts, per-layer query heads
// (uniform, periodic like Laguna's, random mixes; larger and smaller than the model-wide value),
// kv heads that divide them, head sizes including non-powers of two, layer kinds and TP sizes that
// divide. Everything is built valid from per-rank quantities; nothing is filtered.
#pragma once

#include <cstdint>
#include <vector>

#include <rapidcheck.h>

#include "core/model/geometry.hpp"

namespace headroom::generators {

// The largest TP size the generators build a geometry for: a layer's heads are its GQA group
// (at most 32) x its kv heads per rank (at most 8) x the TP size, within max_heads.
inline constexpr int64_t max_generated_tp = 1024;
static_assert(32 * 8 * max_generated_tp <= max_heads);

struct geometry_limits {
  int max_layers = 6;
  std::vector<int64_t> tps = {1, 2, 4, 8};  // drawn from, smaller ones more often (1..max_generated_tp)
  // FlashInfer's decode kernel supports GQA group sizes {1,2,3,4,6,8} only: restrict to them.
  bool flashinfer_groups = false;
  // Head sizes drawn: the small ladder (4..64, most cases: the simulator's cost grows with the head
  // size) and, about one draw in six, the sizes above 64 the case's backend runs (large_head_sizes),
  // none above max_head_size.
  std::vector<int64_t> large_head_sizes;
  int64_t max_head_size = 512;
  // A layer spec of head size 192 takes value head size 128 one time in two (vLLM serves such layers
  // with FlashAttentionDiffKV on FA3: MiMo-V2, openPangu's sink attention); off, v = head size.
  bool value_head_sizes = false;
};

// Every head size a geometry draw can give, ascending: 4..64, then 80, 96, 128, 192, 256, 512.
const std::vector<int64_t>& drawn_head_sizes();
// The largest drawn head size below d (the shrinker's next step down), 0 when there is none.
int64_t next_smaller_head_size(int64_t d);

// A geometry together with a TP size every layer's heads divide by.
struct sized_geometry {
  model_geometry model;
  int64_t tp = 1;
};

// How per-layer head counts are laid out over the layers.
enum class heads_pattern { uniform, periodic, mixed };
// How layer kinds are laid out: all full, all sliding with one window (Mistral-style: one window
// config, which vLLM's FA3 builder schedules ahead of time), Laguna-like (full where the pattern's
// slot is 0, sliding elsewhere), or a random mix including layers without attention.
enum class kinds_pattern { all_full, all_sliding, aligned, mixed };

// The random choices a geometry is realised from. Every field is independent except the sizes of
// the per-layer vectors (n_layers), which gen::mapcat makes dependent.
struct geometry_draw {
  int64_t tp = 1;
  int64_t kv_total = 1;      // model-wide and base kv heads (total); kv_rank = max(1, kv/tp)
  int64_t alt_kv_total = 1;  // kv heads of layers drawn with the alternative spec
  int64_t head_size = 8;
  int64_t alt_head_size = 8;     // for layers drawn with the alternative spec (Gemma-4 style)
  std::vector<int64_t> groups;   // GQA group size per slot (3 slots)
  int64_t model_wide_group = 1;  // model-wide heads = group * kv_rank * tp
  heads_pattern hp = heads_pattern::uniform;
  kinds_pattern kp = kinds_pattern::all_full;
  int64_t period = 2;
  int64_t window = 64;
  std::vector<int> slots;        // per layer, index into groups
  std::vector<attn_kind> kinds;  // per layer, used when kp == mixed
  std::vector<bool> alt_spec;    // per layer, alternative head size
  dtype kv_dtype = dtype::bf16;
  bool smaller_v = false;  // specs of head size 192 get value head size 128 (value_head_sizes)
};

// Realises a draw: a valid geometry (validate() and to_rank(m, tp) both pass).
sized_geometry realise(const geometry_draw& d);

rc::Gen<geometry_draw> geometry_draws(const geometry_limits& lim);
rc::Gen<sized_geometry> geometries(const geometry_limits& lim);

// Index-overflow regime: up to 1e6 heads and head sizes up to 65536, a few layers.
rc::Gen<sized_geometry> large_geometries();

// Layer names as the engine registers them.
std::string layer_name(std::size_t i);

// Per-rank kv heads (docs/engines.md §2: max(1, total // tp)).
inline int64_t kv_rank_of(int64_t kv_total, int64_t tp) { return kv_total / tp > 1 ? kv_total / tp : 1; }

}  // namespace headroom::generators
