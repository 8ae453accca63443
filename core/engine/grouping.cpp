// KV-cache groups and attention groups (docs/engines.md §4). KV-cache groups are keyed by the KV spec only;
// attention groups split them per metadata builder.
#include <algorithm>
#include <map>
#include <tuple>

#include "core/engine/engine.hpp"

namespace headroom {
namespace {

// Buckets of layer names by spec, in order of first appearance.
std::vector<std::pair<kv_spec, std::vector<std::string>>> bucket_by_spec(const registry& reg, dtype kv_dtype,
                                                                         int64_t block_size,
                                                                         bool promote_sliding, kv_quant q) {
  std::vector<std::pair<kv_spec, std::vector<std::string>>> buckets;
  for (const auto& name : reg.names()) {
    kv_spec s = spec_of(*reg.find(name), kv_dtype, block_size, q);
    if (promote_sliding) s.sliding_window = 0;
    auto it = std::find_if(buckets.begin(), buckets.end(), [&](auto& b) { return b.first == s; });
    if (it == buckets.end())
      buckets.push_back({s, {name}});
    else
      it->second.push_back(name);
  }
  return buckets;
}

}  // namespace

std::vector<kv_cache_group> make_kv_cache_groups(const registry& reg, dtype kv_dtype, int64_t block_size,
                                                 bool hybrid, kv_quant q) {
  auto buckets = bucket_by_spec(reg, kv_dtype, block_size, !hybrid, q);
  std::vector<kv_cache_group> groups;
  if (buckets.empty()) return groups;
  if (!hybrid || buckets.size() == 1) {
    for (auto& [spec, names] : buckets) groups.push_back({spec, names});
    return groups;
  }
  // Balance: groups of min(bucket sizes) layers, or of max when max < 1.5 x min.
  std::size_t lo = buckets.front().second.size(), hi = lo;
  for (auto& b : buckets) {
    lo = std::min(lo, b.second.size());
    hi = std::max(hi, b.second.size());
  }
  std::size_t group_size = (2 * hi < 3 * lo) ? hi : lo;
  for (auto& [spec, names] : buckets) {
    std::size_t n = (names.size() + group_size - 1) / group_size;  // groups in this bucket
    for (std::size_t j = 0; j < n; ++j) {
      kv_cache_group g{spec, {}};
      for (std::size_t i = j; i < names.size(); i += n) g.layers.push_back(names[i]);
      groups.push_back(std::move(g));
    }
  }
  return groups;
}

std::vector<attention_group> make_attention_groups(const std::vector<kv_cache_group>& kv_groups,
                                                   const registry& reg, backend be, grouping g) {
  std::vector<attention_group> out;
  for (std::size_t k = 0; k < kv_groups.size(); ++k) {
    // Key within one KV-cache group (backend and spec are fixed there): heads, or nothing.
    std::map<int64_t, std::size_t> by_heads;
    std::size_t first = out.size();
    for (const auto& name : kv_groups[k].layers) {
      int64_t key = g == grouping::heads ? reg.find(name)->num_heads : 0;
      auto it = by_heads.find(key);
      if (it == by_heads.end()) {
        attention_group ag;
        ag.kv_group = static_cast<int>(k);
        ag.be = be;
        ag.spec = kv_groups[k].spec;
        out.push_back(std::move(ag));
        it = by_heads.emplace(key, out.size() - 1).first;
      }
      out[it->second].layers.push_back(name);
    }
    for (std::size_t i = first; i < out.size(); ++i) {
      auto& ag = out[i];
      ag.index = static_cast<int>(i);
      // The proposer path builds the builder from the first layer, then appends the rest.
      if (g == grouping::proposer)
        ag.builder_layers = {ag.layers.front()};
      else
        ag.builder_layers = ag.layers;
    }
  }
  return out;
}

}  // namespace headroom
