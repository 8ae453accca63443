// Counterexample files: case JSON plus per-target expectations (see corpus.hpp).
#include "generators/corpus.hpp"

#include <set>

#include "core/util/error.hpp"
#include "core/util/json_file.hpp"
#include "core/util/json_read.hpp"

namespace headroom::generators {

using nlohmann::json;

std::vector<std::string> invariants_of(const report& r) {
  std::set<std::string> s;
  for (const auto& v : r.violations) s.insert(to_string(v.inv));
  return {s.begin(), s.end()};
}

json to_corpus_json(const corpus_entry& e) {
  json j = to_json(e.c);
  j["expect"] = json::object();
  for (const auto& [target, invs] : e.expect) j["expect"][target] = invs;
  if (e.tight) j["tight"] = *e.tight;
  if (!e.note.empty()) j["note"] = e.note;
  return j;
}

corpus_entry corpus_from_json(const json& j, const std::string& file) {
  corpus_entry e;
  e.c = case_from_json(j, file);
  const auto it = j.find("expect");
  if (it == j.end() || !it->is_object())
    throw input_error(file, "expect", it == j.end() ? "(missing)" : json_read::shown(*it),
                      "expected an object: target -> list of invariant names");
  for (const auto& [target, list] : it->items()) {
    if (!list.is_array())
      throw input_error(file, "expect." + target, json_read::shown(list), "expected a list");
    auto& invs = e.expect[target];  // an empty list is an expectation too: the replay is clean
    for (const auto& inv : list) {
      if (!inv.is_string())
        throw input_error(file, "expect." + target, json_read::shown(inv), "expected invariant names");
      invs.push_back(inv.get<std::string>());
    }
  }
  if (j.contains("tight")) {
    if (!j.at("tight").is_number())
      throw input_error(file, "tight", json_read::shown(j.at("tight")), "expected a number");
    e.tight = j.at("tight").get<double>();
  }
  if (j.contains("note") && j.at("note").is_string()) e.note = j.at("note").get<std::string>();
  return e;
}

corpus_entry load_corpus_entry(const std::string& path) {
  return read_json_input(path, [&](const json& j) { return corpus_from_json(j, path); });
}

}  // namespace headroom::generators
