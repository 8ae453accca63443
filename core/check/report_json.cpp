// Report JSON: the DESIGN layout, with every distinct model stored once under "models" and each
// violation's case naming its model by index ("model_ref"). A report of a model with L layers and V
// violations is O(L + V), not O(L x V); cases_from_report() turns each violation back into a
// standalone case (headroom replay REPORT.json).
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/check/check.hpp"
#include "core/model/loader.hpp"
#include "core/util/error.hpp"
#include "core/util/json_read.hpp"

namespace headroom {
using nlohmann::json;
namespace jr = json_read;

namespace {

// A decode-sweep threshold keeps the documented key min_failing_decode_batch; a class threshold
// names its class and variable instead.
json threshold_json(const threshold& t) {
  json tj = {{"backend", to_string(t.be)},
             {"tp", t.tp},
             {"group", t.group},
             {"builder_heads", t.builder_heads},
             {"layer_heads", t.layer_heads}};
  if (t.variable.empty()) {
    tj["min_failing_decode_batch"] = nullptr;
    if (t.min_failing_decode_batch) tj["min_failing_decode_batch"] = *t.min_failing_decode_batch;
  } else {
    tj["class"] = to_string(t.cls);
    tj["variable"] = t.variable;
    tj["min_failing"] = t.min_failing;
  }
  return tj;
}

// The index of a violation's model among the distinct models seen so far, adding it when new.
// Violations of one check share one model object: known objects are looked up, not compared.
class model_table {
 public:
  std::size_t index(const model_geometry& m) {
    if (auto it = known_.find(&m); it != known_.end()) return it->second;
    std::size_t i = 0;
    while (i < models_.size() && !(*models_[i] == m)) ++i;
    if (i == models_.size()) models_.push_back(&m);
    known_.emplace(&m, i);
    return i;
  }
  const std::vector<const model_geometry*>& models() const { return models_; }

 private:
  std::vector<const model_geometry*> models_;
  std::unordered_map<const model_geometry*, std::size_t> known_;
};

}  // namespace

json to_json(const report& r) {
  model_table models;
  const model_geometry none;
  json vs = json::array(), ts = json::array(), ms = json::array();
  for (const auto& v : r.violations) {
    json c = to_json(v.shell);
    c.erase("model");
    c["model_ref"] = models.index(v.model ? *v.model : none);
    vs.push_back({{"invariant", to_string(v.inv)},
                  {"class", to_string(v.cls)},
                  {"backend", to_string(v.be)},
                  {"tp", v.tp},
                  {"group", v.group},
                  {"layers", v.layers},
                  {"buffer", v.buffer},
                  {"capacity_bytes", v.capacity_bytes},
                  {"required_bytes", v.required_bytes},
                  {"detail", v.detail},
                  {"case", std::move(c)}});
  }
  for (const auto& t : r.thresholds) ts.push_back(threshold_json(t));
  for (const auto* m : models.models()) ms.push_back(to_json(*m));
  return {{"ok", r.ok}, {"models", ms}, {"violations", vs}, {"thresholds", ts}, {"notes", r.notes}};
}

bool is_report(const json& j) { return j.is_object() && j.contains("violations") && j.contains("ok"); }

std::vector<check_case> cases_from_report(const json& j, const std::string& file) {
  std::vector<model_geometry> models;
  const json& ms = jr::field(j, "models", file, "");
  if (!ms.is_array()) throw input_error(file, "models", jr::shown(ms), "expected a list of models");
  for (const auto& m : ms) models.push_back(parse_model(m, file));
  const json& vs = jr::field(j, "violations", file, "");
  if (!vs.is_array()) throw input_error(file, "violations", jr::shown(vs), "expected a list of violations");
  std::vector<check_case> out;
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const std::string path = "violations[" + std::to_string(i) + "].";
    out.push_back(case_from_json(jr::field(vs[i], "case", file, path), file, &models, path + "case."));
  }
  return out;
}

}  // namespace headroom
