// Head resolution for a metadata builder (docs/engines.md §1): the fix (per-layer), the regression
// (model-wide) and the conservative alternative (max).
#include <algorithm>
#include <set>
#include <string>

#include "core/engine/engine.hpp"

namespace headroom {

head_resolution resolve_heads(const registry& reg, const std::vector<std::string>& names, policy p,
                              int64_t model_wide_heads) {
  head_resolution r;
  std::set<int64_t> distinct;
  std::vector<std::string> found;
  for (const auto& n : names)
    if (const rank_layer* l = reg.find(n)) {  // unregistered names are silently dropped
      distinct.insert(l->num_heads);
      found.push_back(n);
    }
  r.distinct_heads.assign(distinct.begin(), distinct.end());

  if (p == policy::model_wide) {
    r.builder_heads = model_wide_heads;
    return r;
  }
  if (distinct.empty()) {  // helper returns none; `helper(...) or model_wide` falls back
    r.builder_heads = model_wide_heads;
    r.fell_back = true;
    return r;
  }
  if (p == policy::max) {
    r.builder_heads = *distinct.rbegin();
    return r;
  }
  if (distinct.size() > 1) {
    r.disagreement = true;
    std::string heads, layers;
    for (int64_t h : distinct) heads += (heads.empty() ? "" : ", ") + std::to_string(h);
    for (const auto& n : found) layers += (layers.empty() ? "" : ", ") + n;
    r.message = "layers in one attention group disagree on num_heads: {" + heads + "} in [" + layers + "]";
    r.builder_heads = 0;
    return r;
  }
  r.builder_heads = *distinct.begin();
  if (r.builder_heads == 0) {  // a 0 also falls back (`or`)
    r.builder_heads = model_wide_heads;
    r.fell_back = true;
  }
  return r;
}

}  // namespace headroom
