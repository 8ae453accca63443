// The engine's view of a model (docs/engines.md §1 and 3, mirroring vLLM v1): the registry of attention
// layers, KV-cache groups keyed by KV spec, attention groups (one metadata builder each), and the
// head resolution that sizes each builder.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model/geometry.hpp"

namespace headroom {

// fa3: vLLM's FLASH_ATTN on FlashAttention 3, checked for its scheduler metadata only (no FA3
// attention body runs: docs/catalogue.md C3).
enum class backend { triton, flashinfer, fa3 };
enum class grouping { heads, legacy, proposer };
enum class policy { per_layer, model_wide, max };
// How the paged KV cache holds K and V (docs/engines.md §10): two arrays [blocks][block_size]
// [kv_heads][head_size], or, since vLLM PR #44455, one allocation [blocks][block_size][kv_heads]
// [2 * head_size] with K the first head_size elements of each (slot, kv head) row and V the second.
enum class kv_layout { separate, packed };

const char* to_string(backend b);
const char* to_string(grouping g);
const char* to_string(policy p);
const char* to_string(kv_layout k);
backend parse_backend(const std::string& s, const std::string& file, const std::string& field);
grouping parse_grouping(const std::string& s, const std::string& file, const std::string& field);
policy parse_policy(const std::string& s, const std::string& file, const std::string& field);
kv_layout parse_kv_layout(const std::string& s, const std::string& file, const std::string& field);

// The KV-cache spec: what KV-cache groups are keyed by. Query heads are NOT part of it.
struct kv_spec {
  int64_t num_kv_heads = 0;
  int64_t head_size = 0;
  int64_t head_size_v = 0;
  dtype kv_dtype = dtype::bf16;
  int64_t block_size = 16;
  int64_t sliding_window = 0;       // 0: full attention
  kv_quant quant = kv_quant::none;  // an fp8 cache: 1-byte elements (the spec's dtype is uint8)
  auto operator<=>(const kv_spec&) const = default;
};

// vLLM's page_size_bytes of a FullAttentionSpec / SlidingWindowSpec without padding or per-token
// scales (kv_cache_interface.py real_page_size_bytes): block_size x kv heads x (head size + head
// size v) x the cache element's bytes. Checked arithmetic.
int64_t page_size_bytes(const kv_spec& s);

// Every attention layer, by prefix. Adding a duplicate prefix throws; lookups of unknown names
// return nullptr (the engine silently drops them).
class registry {
 public:
  void add(const rank_layer& layer);
  const rank_layer* find(const std::string& name) const;
  const std::vector<std::string>& names() const { return order_; }  // registration order
  std::size_t size() const { return order_.size(); }

 private:
  std::map<std::string, rank_layer> layers_;
  std::vector<std::string> order_;
};

registry make_registry(const rank_geometry& g);
kv_spec spec_of(const rank_layer& l, dtype kv_dtype, int64_t block_size, kv_quant q = kv_quant::none);

struct kv_cache_group {
  kv_spec spec;
  std::vector<std::string> layers;
};

// Hybrid manager on: bucket by spec, balance bucket sizes; off: promote sliding to full first.
std::vector<kv_cache_group> make_kv_cache_groups(const registry& reg, dtype kv_dtype, int64_t block_size,
                                                 bool hybrid, kv_quant q = kv_quant::none);

struct attention_group {
  int index = 0;     // global index over all attention groups of one backend
  int kv_group = 0;  // the KV-cache group it splits
  backend be = backend::triton;
  kv_spec spec;
  std::vector<std::string> layers;          // layers whose forward uses this builder
  std::vector<std::string> builder_layers;  // names the builder resolves its heads from
};

// heads: key (backend, spec, heads); legacy: key (backend, spec); proposer: key (backend), the
// builder resolved from the first layer before the rest are appended.
std::vector<attention_group> make_attention_groups(const std::vector<kv_cache_group>& kv_groups,
                                                   const registry& reg, backend be, grouping g);

// What a builder was told, and how it got there.
struct head_resolution {
  int64_t builder_heads = 0;
  bool fell_back = false;               // no registered layer found: model-wide count used
  bool disagreement = false;            // per-layer policy saw more than one head count
  std::vector<int64_t> distinct_heads;  // the distinct per-rank head counts of the found layers
  std::string message;                  // the assertion's text when disagreement
};

// docs/engines.md §1: per_layer is get_num_attention_heads_from_layers(...) or model_wide;
// model_wide is the regression; max takes the largest count found.
head_resolution resolve_heads(const registry& reg, const std::vector<std::string>& names, policy p,
                              int64_t model_wide_heads);

}  // namespace headroom
