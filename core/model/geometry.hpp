// Per-layer model geometry (docs/engines.md §2): what a config says about every layer, before and after
// tensor parallelism. Both config forms (Hugging Face and headroom's explicit list) produce this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace headroom {

enum class attn_kind { full, sliding, none };  // none: no attention (mamba, linear, no-op)
enum class dtype { bf16, fp16, fp32 };
// A KV cache quantised apart from the model's dtype (vLLM --kv-cache-dtype fp8 / fp8_e4m3 /
// fp8_e5m2, CacheConfig.cache_dtype; the cache tensor is torch.uint8, STR_DTYPE_TO_TORCH_DTYPE):
// none, the cache holds the model's dtype.
enum class kv_quant { none, fp8_e4m3, fp8_e5m2 };

int dtype_bytes(dtype d);
// One cache element's bytes: 1 for fp8 (get_dtype_size(torch.uint8)), else the model dtype's.
int kv_cache_bytes(dtype model, kv_quant q);
const char* to_string(kv_quant q);  // "auto" for none (vLLM's name), else "fp8_e4m3" / "fp8_e5m2"
// vLLM's fp8 spellings (fp8 is fp8_e4m3 on CUDA); nullopt for any other string.
std::optional<kv_quant> parse_kv_quant(const std::string& s);
const char* to_string(dtype d);
const char* to_string(attn_kind k);
dtype parse_dtype(const std::string& s, const std::string& file, const std::string& field);
attn_kind parse_attn_kind(const std::string& s, const std::string& file, const std::string& field);
// A layer type without attention that keeps a recurrent state in the KV cache (vLLM's MambaSpec:
// mamba, mamba2, linear_attention, ...), as opposed to a no-op layer.
bool is_state_kind(const std::string& s);

// One layer as the config describes it (totals across all ranks).
struct layer_geometry {
  std::string name;  // registry prefix, e.g. model.layers.7.self_attn.attn
  attn_kind kind = attn_kind::full;
  int64_t num_heads = 0;     // query heads (total)
  int64_t num_kv_heads = 0;  // kv heads (total)
  int64_t head_size = 0;
  int64_t head_size_v = 0;
  int64_t sliding_window = 0;  // 0: none
  int64_t compress_ratio = 0;  // 0: none; else the indexer's KV is seq_len // ratio (DeepSeek-V4)
  bool mamba_state = false;    // kind none only: a Mamba-style state layer (is_state_kind)
  bool operator==(const layer_geometry&) const = default;
};

// Where a geometry's values came from in its file, for messages only: not serialised, not
// compared. Empty entries fall back to the explicit form's paths (num_attention_heads,
// num_key_value_heads, layers[i].num_heads, layers[i].num_kv_heads).
struct geometry_origin {
  std::string num_attention_heads;          // e.g. text_config.num_attention_heads
  std::string num_kv_heads;                 // the kv alias actually read, e.g. num_key_value_heads
  std::vector<std::string> layer_heads;     // per layer, e.g. num_attention_heads_per_layer[3]
  std::vector<std::string> layer_kv_heads;  // per layer, e.g. swa_num_key_value_heads
};

// The whole model: the model-wide values the engine's builders read, plus every layer.
struct model_geometry {
  std::string source;                  // file it was loaded from (for messages); not serialised
  std::string name;                    // model name (architecture or file stem)
  int64_t num_attention_heads = 0;     // model-wide query heads (total)
  int64_t num_kv_heads = 0;            // model-wide kv heads (total)
  int64_t head_size = 0;               // model-wide head size
  int64_t hidden_size = 0;             // the config's hidden_size; 0: unknown
  dtype kv_dtype = dtype::bf16;        // the model's dtype: queries, outputs, and the cache unless quantised
  kv_quant kv_cache = kv_quant::none;  // the KV cache's fp8 format (--kv-cache-dtype), if any
  std::vector<layer_geometry> layers;
  geometry_origin origin;  // field paths for messages; not serialised, not compared
  bool operator==(const model_geometry& o) const {
    return name == o.name && num_attention_heads == o.num_attention_heads && num_kv_heads == o.num_kv_heads &&
           head_size == o.head_size && hidden_size == o.hidden_size && kv_dtype == o.kv_dtype &&
           kv_cache == o.kv_cache && layers == o.layers;
  }
};

// One layer as one tensor-parallel rank sees it.
struct rank_layer {
  std::string name;
  attn_kind kind = attn_kind::full;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_size = 0;
  int64_t head_size_v = 0;
  int64_t sliding_window = 0;
  int64_t compress_ratio = 0;
};

// The last dimension of the layer's V and of its output: head_size_v where the config gives one
// (DiffKV layers, e.g. MiMo-V2's 192 / 128), else the head size.
inline int64_t head_size_v_of(const rank_layer& l) { return l.head_size_v > 0 ? l.head_size_v : l.head_size; }

struct rank_geometry {
  int64_t tp = 1;
  int64_t model_wide_heads = 0;     // num_attention_heads // tp
  int64_t model_wide_kv_heads = 0;  // max(1, total_kv // tp)
  int64_t head_size = 0;
  dtype kv_dtype = dtype::bf16;
  std::vector<rank_layer> layers;  // attention layers only (kind != none)
};

// Limits checked before anything is allocated (docs/design.md: exit code 2: absurd sizes). Layers: real
// models have a few hundred; a check costs about 1.6 KB and 6.5 us per layer (docs/reliability.md),
// so 100000 layers run in under a second and a config claiming more is refused before any work.
inline constexpr int64_t max_layers = 100'000;
inline constexpr int64_t max_heads = 1'000'000;
inline constexpr int64_t max_head_size = 65'536;
inline constexpr int64_t max_hidden_size = max_heads * max_head_size;
inline constexpr int64_t max_tp = 4096;
inline constexpr int64_t max_sliding_window = int64_t{1} << 32;  // tokens
inline constexpr int64_t max_compress_ratio = 1 << 20;

// Per-rank geometry (docs/engines.md §2): query heads divide by tp (model-wide and per layer), kv heads
// replicate when tp exceeds them (tp must then be a multiple of them). Throws input_error.
rank_geometry to_rank(const model_geometry& m, int64_t tp);

// Structural validation of a geometry (positive fields, kv heads dividing heads, limits).
// Throws input_error naming source, field and value.
void validate(const model_geometry& m);

}  // namespace headroom
