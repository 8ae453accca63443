// One table per enum of the names the command line, the case JSON and the reports spell: to_string
// and parse_* of an enum are both read off its table, so a new value is one new row.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/util/error.hpp"

namespace headroom {

template <class E, std::size_t N>
using name_table = std::array<std::pair<E, const char*>, N>;

// The name of v, or `missing` when the table has no row for it.
template <class E, std::size_t N>
constexpr const char* name_in(const name_table<E, N>& t, E v, const char* missing = "?") {
  for (const auto& [value, name] : t)
    if (value == v) return name;
  return missing;
}

template <class E, std::size_t N>
constexpr std::optional<E> find_in(const name_table<E, N>& t, std::string_view s) {
  for (const auto& [value, name] : t)
    if (s == name) return value;
  return std::nullopt;
}

// "a, b or c": the table's names for a message.
template <class E, std::size_t N>
std::string names_of(const name_table<E, N>& t) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i)
    out += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(t[i].second);
  return out;
}

// The value named s; an input_error naming the file, the field and s otherwise.
template <class E, std::size_t N>
E parse_in(const name_table<E, N>& t, const std::string& s, const std::string& file,
           const std::string& field) {
  if (const auto v = find_in(t, s)) return *v;
  throw input_error(file, field, "\"" + s + "\"", "expected " + names_of(t));
}

}  // namespace headroom
