// Typed, range-checked reads of JSON fields. Every failure is an input_error naming the file, the
// full field path and the offending value, so a bad file never reaches an assertion or a crash.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"

namespace headroom::json_read {

// A value as an error message shows it, cut to 60 characters. dump() recurses once per nesting
// level, so only scalars and flat lists or objects of at most shown_flat_limit entries are
// dumped; anything else is described by its size (a file of 200k nested '[' must not overflow
// the stack here).
inline constexpr std::size_t shown_flat_limit = 16;  // bounds the work for a 60-character message

inline std::string shown(const nlohmann::json& v) {
  if (v.is_structured()) {
    const bool flat =
        v.size() <= shown_flat_limit &&
        std::none_of(v.begin(), v.end(), [](const nlohmann::json& e) { return e.is_structured(); });
    if (!flat) {
      const std::string plural = v.size() == 1 ? "" : "s";
      return v.is_array() ? "an array of " + std::to_string(v.size()) + " element" + plural
                          : "an object of " + std::to_string(v.size()) + " field" + plural;
    }
  }
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

inline const nlohmann::json& field(const nlohmann::json& obj, const std::string& key, const std::string& file,
                                   const std::string& path) {
  if (!obj.is_object()) throw input_error(file, path, shown(obj), "expected an object");
  auto it = obj.find(key);
  if (it == obj.end()) throw input_error(file, path + key, "(missing)", "required field");
  return *it;
}

inline const nlohmann::json& get_object(const nlohmann::json& obj, const std::string& key,
                                        const std::string& file, const std::string& path) {
  const auto& v = field(obj, key, file, path);
  if (!v.is_object()) throw input_error(file, path + key, shown(v), "expected an object");
  return v;
}

inline int64_t as_int(const nlohmann::json& v, const std::string& file, const std::string& path, int64_t lo,
                      int64_t hi) {
  if (!v.is_number_integer()) throw input_error(file, path, shown(v), "expected an integer");
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    throw input_error(file, path, shown(v), "out of range");
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi)
    throw input_error(file, path, shown(v), "must be in " + std::to_string(lo) + ".." + std::to_string(hi));
  return x;
}

inline int64_t get_int(const nlohmann::json& obj, const std::string& key, const std::string& file,
                       const std::string& path, int64_t lo, int64_t hi) {
  return as_int(field(obj, key, file, path), file, path + key, lo, hi);
}

inline int64_t get_int_or(const nlohmann::json& obj, const std::string& key, int64_t fallback,
                          const std::string& file, const std::string& path, int64_t lo, int64_t hi) {
  return obj.contains(key) ? get_int(obj, key, file, path, lo, hi) : fallback;
}

inline bool get_bool_or(const nlohmann::json& obj, const std::string& key, bool fallback,
                        const std::string& file, const std::string& path) {
  if (!obj.contains(key)) return fallback;
  const auto& v = obj.at(key);
  if (!v.is_boolean()) throw input_error(file, path + key, shown(v), "expected true or false");
  return v.get<bool>();
}

inline std::string get_string(const nlohmann::json& obj, const std::string& key, const std::string& file,
                              const std::string& path) {
  const auto& v = field(obj, key, file, path);
  if (!v.is_string()) throw input_error(file, path + key, shown(v), "expected a string");
  return v.get<std::string>();
}

}  // namespace headroom::json_read
