// Small helpers shared by the generators: weighted choices from a runtime list (RapidCheck's
// gen::weightedElement takes an initializer list only).
#pragma once

#include <utility>
#include <vector>

#include <rapidcheck.h>

namespace headroom::generators {

// Picks an element with probability proportional to its weight.
template <class T>
rc::Gen<T> weighted(const std::vector<std::pair<int, T>>& choices) {
  std::vector<T> expanded;
  for (const auto& [w, v] : choices)
    for (int i = 0; i < w; ++i) expanded.push_back(v);
  return rc::gen::elementOf(expanded);
}

}  // namespace headroom::generators
