// The sizing-bug catalogue: the classes of bug headroom finds (C1..C11, docs/catalogue.md) and, for
// each historical wrong formula, a named mutant of the engine mirror. Without a mutant the mirror
// is the engines' fixed code; `--mutant NAME` (check, fuzz, replay, plan) switches one formula back
// to its historical wrong form, and the fuzzer must find it from a cold start.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/check/finding.hpp"

namespace headroom {

struct mutant_info {
  std::string_view name;  // the --mutant value
  bug_class cls;
  std::string_view sources;  // the upstream issues and pull requests it reproduces
  invariant caught_by;       // the invariant that must report it
  std::string_view wrong;    // the historical formula
  std::string_view right;    // the engines' fix, which the mirror runs without the mutant
};

// Every mutant, in class order.
std::span<const mutant_info> all_mutants();
const mutant_info* find_mutant(std::string_view name);

// A case's switched-on mutants: sorted, unique, every name in the registry.
using mutant_set = std::vector<std::string>;
bool has_mutant(const mutant_set& s, std::string_view name);
// Throws input_error (file, field, the name) for an unknown mutant; returns the normalised set.
mutant_set make_mutant_set(const std::vector<std::string>& names, const std::string& file,
                           const std::string& field);

}  // namespace headroom
