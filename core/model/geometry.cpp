// Model geometry (docs/engines.md §2): dtype and layer-kind names, structural validation, and the per-rank
// view of a model under tensor parallelism. Every failure is an input_error naming the file, the
// field path (the config's own field where the loader recorded it) and the value.
#include "core/model/geometry.hpp"

#include <unordered_map>

#include "core/util/error.hpp"
#include "core/util/names.hpp"

namespace headroom {

int dtype_bytes(dtype d) {
  switch (d) {
    case dtype::bf16:
      return 2;
    case dtype::fp16:
      return 2;
    case dtype::fp32:
      return 4;
  }
  return 0;
}

int kv_cache_bytes(dtype model, kv_quant q) { return q == kv_quant::none ? dtype_bytes(model) : 1; }

namespace {

constexpr name_table<dtype, 3> dtype_names = {
    {{dtype::bf16, "bfloat16"}, {dtype::fp16, "float16"}, {dtype::fp32, "float32"}}};
// What configs write besides the torch names.
constexpr name_table<dtype, 5> dtype_aliases = {{{dtype::bf16, "bf16"},
                                                 {dtype::fp16, "fp16"},
                                                 {dtype::fp16, "half"},
                                                 {dtype::fp32, "fp32"},
                                                 {dtype::fp32, "float"}}};
constexpr name_table<attn_kind, 3> kind_names = {{{attn_kind::full, "full_attention"},
                                                  {attn_kind::sliding, "sliding_attention"},
                                                  {attn_kind::none, "none"}}};
constexpr name_table<kv_quant, 3> kv_quant_names = {
    {{kv_quant::none, "auto"}, {kv_quant::fp8_e4m3, "fp8_e4m3"}, {kv_quant::fp8_e5m2, "fp8_e5m2"}}};

}  // namespace

const char* to_string(dtype d) { return name_in(dtype_names, d); }
const char* to_string(attn_kind k) { return name_in(kind_names, k); }
const char* to_string(kv_quant q) { return name_in(kv_quant_names, q); }

std::optional<kv_quant> parse_kv_quant(const std::string& s) {
  if (s == "fp8") return kv_quant::fp8_e4m3;  // CUDA: fp8 is e4m3 (CacheConfig)
  const auto q = find_in(kv_quant_names, s);
  return q == kv_quant::none ? std::nullopt : q;  // auto is no fp8 spelling
}

dtype parse_dtype(const std::string& s, const std::string& file, const std::string& field) {
  if (const auto d = find_in(dtype_names, s)) return *d;
  if (const auto d = find_in(dtype_aliases, s)) return *d;
  throw input_error(file, field, "\"" + s + "\"",
                    "unsupported dtype (expected " + names_of(dtype_names) + ")");
}

attn_kind parse_attn_kind(const std::string& s, const std::string& file, const std::string& field) {
  if (s == "full_attention") return attn_kind::full;
  if (s == "sliding_attention") return attn_kind::sliding;
  // Layers without attention: state-space, linear-attention and skipped layers.
  static const char* const no_attention[] = {"none",   "no_op", "linear_attention", "mamba", "mamba2",
                                             "linear", "conv",  "recurrent"};
  for (const char* k : no_attention)
    if (s == k) return attn_kind::none;
  throw input_error(file, field, "\"" + s + "\"",
                    "unknown layer type (expected full_attention, sliding_attention or a "
                    "no-attention kind such as linear_attention, mamba, no_op, none)");
}

bool is_state_kind(const std::string& s) {
  static const char* const state[] = {"mamba", "mamba2", "linear_attention", "linear", "conv", "recurrent"};
  for (const char* k : state)
    if (s == k) return true;
  return false;
}

namespace {

std::string num(int64_t v) { return std::to_string(v); }

std::string layer_path(std::size_t i, const char* field) {
  return "layers[" + std::to_string(i) + "]." + field;
}

// Field paths as the source file spells them, falling back to the explicit form's.
std::string heads_field(const model_geometry& m, std::size_t i) {
  const auto& o = m.origin.layer_heads;
  if (o.size() == m.layers.size() && !o[i].empty()) return o[i];
  return layer_path(i, "num_heads");
}

std::string kv_field(const model_geometry& m, std::size_t i) {
  const auto& o = m.origin.layer_kv_heads;
  if (o.size() == m.layers.size() && !o[i].empty()) return o[i];
  return layer_path(i, "num_kv_heads");
}

std::string model_heads_field(const model_geometry& m) {
  return m.origin.num_attention_heads.empty() ? "num_attention_heads" : m.origin.num_attention_heads;
}

std::string model_kv_field(const model_geometry& m) {
  return m.origin.num_kv_heads.empty() ? "num_key_value_heads" : m.origin.num_kv_heads;
}

void check_range(const model_geometry& m, const std::string& field, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) throw input_error(m.source, field, num(v), "must be in " + num(lo) + ".." + num(hi));
}

void check_kv_divides(const model_geometry& m, const std::string& field, int64_t kv, int64_t heads,
                      const std::string& where) {
  if (heads % kv != 0)
    throw input_error(m.source, field, num(kv),
                      "kv heads must divide the " + num(heads) + " query heads of " + where);
}

void validate_attention_layer(const model_geometry& m, std::size_t i) {
  const layer_geometry& l = m.layers[i];
  check_range(m, heads_field(m, i), l.num_heads, 1, max_heads);
  check_range(m, kv_field(m, i), l.num_kv_heads, 1, max_heads);
  check_range(m, layer_path(i, "head_size"), l.head_size, 1, max_head_size);
  check_range(m, layer_path(i, "head_size_v"), l.head_size_v, 1, max_head_size);
  check_kv_divides(m, kv_field(m, i), l.num_kv_heads, l.num_heads, l.name);
  check_range(m, layer_path(i, "compress_ratio"), l.compress_ratio, 0, max_compress_ratio);
  if (l.kind == attn_kind::sliding)
    check_range(m, layer_path(i, "sliding_window"), l.sliding_window, 1, max_sliding_window);
  else if (l.sliding_window != 0)
    throw input_error(m.source, layer_path(i, "sliding_window"), num(l.sliding_window),
                      "a full-attention layer has no sliding window (must be 0)");
}

void validate_layer(const model_geometry& m, std::size_t i) {
  const layer_geometry& l = m.layers[i];
  if (l.mamba_state && l.kind != attn_kind::none)
    throw input_error(m.source, layer_path(i, "type"), to_string(l.kind),
                      "a Mamba state layer has no attention");
  if (l.kind != attn_kind::none) return validate_attention_layer(m, i);
  // A layer without attention carries no geometry; zeros are expected, garbage is not.
  check_range(m, layer_path(i, "num_heads"), l.num_heads, 0, max_heads);
  check_range(m, layer_path(i, "num_kv_heads"), l.num_kv_heads, 0, max_heads);
  check_range(m, layer_path(i, "head_size"), l.head_size, 0, max_head_size);
  check_range(m, layer_path(i, "head_size_v"), l.head_size_v, 0, max_head_size);
  check_range(m, layer_path(i, "sliding_window"), l.sliding_window, 0, 0);
  check_range(m, layer_path(i, "compress_ratio"), l.compress_ratio, 0, 0);
}

}  // namespace

void validate(const model_geometry& m) {
  check_range(m, model_heads_field(m), m.num_attention_heads, 1, max_heads);
  check_range(m, model_kv_field(m), m.num_kv_heads, 1, max_heads);
  check_range(m, "head_dim", m.head_size, 1, max_head_size);
  check_range(m, "hidden_size", m.hidden_size, 0, max_hidden_size);
  check_kv_divides(m, model_kv_field(m), m.num_kv_heads, m.num_attention_heads, "the model");
  const int64_t n = static_cast<int64_t>(m.layers.size());
  if (n < 1 || n > max_layers)
    throw input_error(m.source, "layers", num(n) + " layers",
                      "a model has 1.." + num(max_layers) + " layers");
  std::unordered_map<std::string, std::size_t> seen;
  bool any_attention = false;
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const std::string& name = m.layers[i].name;
    if (name.empty()) throw input_error(m.source, layer_path(i, "name"), "\"\"", "a layer needs a name");
    auto [it, fresh] = seen.emplace(name, i);
    if (!fresh)
      throw input_error(m.source, layer_path(i, "name"), "\"" + name + "\"",
                        "duplicate of layers[" + std::to_string(it->second) + "].name");
    validate_layer(m, i);
    any_attention = any_attention || m.layers[i].kind != attn_kind::none;
  }
  if (!any_attention) throw input_error(m.source, "layers", num(n) + " layers", "no layer has attention");
}

namespace {

// Query heads split evenly over the ranks (vLLM asserts it for the model and for each layer).
void check_heads_divide(const model_geometry& m, const std::string& field, int64_t heads, int64_t tp) {
  check_range(m, field, heads, 1, max_heads);
  if (heads % tp != 0)
    throw input_error(
        m.source, field, num(heads),
        "query heads are not divisible by tp " + num(tp) + " (remainder " + num(heads % tp) + ")");
}

// KV heads split when tp <= kv, else are replicated: tp must then be a multiple of them.
void check_kv_split(const model_geometry& m, const std::string& field, int64_t kv, int64_t tp) {
  check_range(m, field, kv, 1, max_heads);
  if (tp > kv ? tp % kv != 0 : kv % tp != 0)
    throw input_error(m.source, field, num(kv),
                      "tp " + num(tp) + " must divide the kv heads or be a multiple of them");
}

int64_t kv_per_rank(int64_t kv, int64_t tp) { return kv / tp > 1 ? kv / tp : 1; }

}  // namespace

// Query heads are checked before kv heads (model-wide, then every layer) so that a TP size that
// splits a layer's query heads unevenly is reported as such even when kv heads fail too.
rank_geometry to_rank(const model_geometry& m, int64_t tp) {
  if (tp < 1 || tp > max_tp) throw input_error(m.source, "tp", num(tp), "must be in 1.." + num(max_tp));
  check_heads_divide(m, model_heads_field(m), m.num_attention_heads, tp);
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    if (m.layers[i].kind != attn_kind::none)
      check_heads_divide(m, heads_field(m, i), m.layers[i].num_heads, tp);
  check_kv_split(m, model_kv_field(m), m.num_kv_heads, tp);
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    if (m.layers[i].kind != attn_kind::none) check_kv_split(m, kv_field(m, i), m.layers[i].num_kv_heads, tp);
  rank_geometry r;
  r.tp = tp;
  r.model_wide_heads = m.num_attention_heads / tp;
  r.model_wide_kv_heads = kv_per_rank(m.num_kv_heads, tp);
  r.head_size = m.head_size;
  r.kv_dtype = m.kv_dtype;
  for (const layer_geometry& l : m.layers) {
    if (l.kind == attn_kind::none) continue;
    r.layers.push_back({l.name, l.kind, l.num_heads / tp, kv_per_rank(l.num_kv_heads, tp), l.head_size,
                        l.head_size_v, l.sliding_window, l.compress_ratio});
  }
  return r;
}

}  // namespace headroom
