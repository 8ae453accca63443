// Shrink candidates of a case's model: fewer layers, TP 1, smaller and more uniform head counts,
// smaller head sizes, full attention.
#include <algorithm>
#include <set>

#include "generators/geometry_gen.hpp"
#include "generators/shrink_parts.hpp"

namespace headroom::generators {

namespace {

using layer_list = std::vector<layer_geometry>;

check_case with_layers(const check_case& c, layer_list layers) {
  check_case out = c;
  out.model.layers = std::move(layers);
  return out;
}

// Fewer layers: each attention layer alone, then halves, then each layer removed.
void fewer_layers(const check_case& c, std::vector<check_case>& out) {
  const layer_list& ls = c.model.layers;
  if (ls.size() <= 1) return;
  for (const auto& l : ls)
    if (l.kind != attn_kind::none) out.push_back(with_layers(c, {l}));
  const auto half = static_cast<std::ptrdiff_t>(ls.size() / 2);
  if (ls.size() >= 4) {
    out.push_back(with_layers(c, layer_list(ls.begin(), ls.begin() + half)));
    out.push_back(with_layers(c, layer_list(ls.begin() + half, ls.end())));
  }
  for (std::size_t i = 0; i < ls.size(); ++i) {
    layer_list rest = ls;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
    out.push_back(with_layers(c, std::move(rest)));
  }
}

// TP 1 with the same per-rank numbers: what every rank sees, written as a one-rank model.
void to_tp1(const check_case& c, std::vector<check_case>& out) {
  if (c.tp == 1) return;
  check_case o = c;
  auto kv_rank = [&](int64_t kv) { return std::max<int64_t>(1, kv / c.tp); };
  o.tp = 1;
  o.model.num_attention_heads /= c.tp;
  o.model.num_kv_heads = kv_rank(c.model.num_kv_heads);
  for (auto& l : o.model.layers)
    if (l.kind != attn_kind::none) l.num_heads /= c.tp, l.num_kv_heads = kv_rank(l.num_kv_heads);
  out.push_back(std::move(o));
}

// Smaller head counts that keep kv dividing them: group sizes 1, g - g/2, g - g/4, ..., g - 1.
std::vector<int64_t> smaller_heads(int64_t heads, int64_t kv) {
  const int64_t g = heads / kv;
  std::vector<int64_t> out;
  for (int64_t g2 = 1, d = g / 2;; d /= 2) {
    if (g2 < g && (out.empty() || kv * g2 > out.back())) out.push_back(kv * g2);
    if (d == 0) break;
    g2 = g - d;
  }
  if (g > 1 && out.back() != kv * (g - 1)) out.push_back(kv * (g - 1));
  return out;
}

void smaller_head_counts(const check_case& c, std::vector<check_case>& out) {
  const model_geometry& m = c.model;
  for (int64_t h : smaller_heads(m.num_attention_heads, m.num_kv_heads)) {
    check_case o = c;
    o.model.num_attention_heads = h;
    out.push_back(std::move(o));
  }
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    if (m.layers[i].kind == attn_kind::none) continue;
    for (int64_t h : smaller_heads(m.layers[i].num_heads, m.layers[i].num_kv_heads)) {
      check_case o = c;
      o.model.layers[i].num_heads = h;
      out.push_back(std::move(o));
    }
  }
}

// More uniform: a layer takes the model-wide count or the first layer's; one kv head everywhere.
void more_uniform(const check_case& c, std::vector<check_case>& out) {
  const model_geometry& m = c.model;
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const auto& l = m.layers[i];
    if (l.kind == attn_kind::none) continue;
    for (int64_t h : {m.num_attention_heads, m.layers.front().num_heads})
      if (h != l.num_heads && h > 0) {
        check_case o = c;
        o.model.layers[i].num_heads = h;
        out.push_back(std::move(o));
      }
  }
  bool kv_one = m.num_kv_heads == 1;
  for (const auto& l : m.layers) kv_one = kv_one && (l.kind == attn_kind::none || l.num_kv_heads == 1);
  if (!kv_one) {
    check_case o = c;
    o.model.num_kv_heads = 1;
    for (auto& l : o.model.layers)
      if (l.kind != attn_kind::none) l.num_kv_heads = 1;
    out.push_back(std::move(o));
  }
}

// Smaller head sizes (one layer, or all to the model-wide value; 8, half, or the next drawn size
// down, so a failure that needs a size above a threshold stops at the smallest drawn one that
// still fails) and full attention.
void simpler_layers(const check_case& c, std::vector<check_case>& out) {
  const model_geometry& m = c.model;
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const auto& l = m.layers[i];
    if (l.kind == attn_kind::none) continue;
    for (int64_t d : {m.head_size, int64_t{8}, l.head_size / 2, next_smaller_head_size(l.head_size)})
      if (d > 0 && d < l.head_size) {
        check_case o = c;
        o.model.layers[i].head_size = o.model.layers[i].head_size_v = d;
        out.push_back(std::move(o));
      }
    if (l.kind == attn_kind::sliding) {
      check_case o = c;
      o.model.layers[i].kind = attn_kind::full;
      o.model.layers[i].sliding_window = 0;
      out.push_back(std::move(o));
    }
  }
  for (int64_t d : {int64_t{8}, m.head_size / 2, next_smaller_head_size(m.head_size)})
    if (d > 0 && d < m.head_size) {
      check_case o = c;
      o.model.head_size = d;
      out.push_back(std::move(o));
    }
}

// Every attention layer's head size at once (layers sharing a KV spec must change together).
void smaller_head_sizes(const check_case& c, std::vector<check_case>& out) {
  int64_t widest = 0;
  for (const auto& l : c.model.layers) widest = std::max(widest, l.head_size);
  for (int64_t d : {c.model.head_size, int64_t{8}, widest / 2, next_smaller_head_size(widest)}) {
    if (d < 1 || d >= widest) continue;
    check_case o = c;
    for (auto& l : o.model.layers)
      if (l.kind != attn_kind::none) l.head_size = l.head_size_v = std::min(l.head_size, d);
    out.push_back(std::move(o));
  }
}

}  // namespace

void model_candidates(const check_case& c, std::vector<check_case>& out) {
  fewer_layers(c, out);
  to_tp1(c, out);
  smaller_head_counts(c, out);
  more_uniform(c, out);
  smaller_head_sizes(c, out);
  simpler_layers(c, out);
}

}  // namespace headroom::generators
