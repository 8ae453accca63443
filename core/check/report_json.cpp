// Report JSON exactly as DESIGN.md lays it out.
#include <nlohmann/json.hpp>

#include "core/check/check.hpp"

namespace headroom {
using nlohmann::json;

json to_json(const violation& v) {
  json j = {{"invariant", v.invariant}, {"backend", to_string(v.be)}, {"tp", v.tp},
            {"group", v.group},         {"layers", v.layers},          {"buffer", v.buffer},
            {"capacity_bytes", v.capacity_bytes}, {"required_bytes", v.required_bytes},
            {"detail", v.detail},       {"case", to_json(v.repro)}};
  return j;
}

json to_json(const report& r) {
  json vs = json::array(), ts = json::array();
  for (const auto& v : r.violations) vs.push_back(to_json(v));
  for (const auto& t : r.thresholds) {
    json tj = {{"backend", to_string(t.be)}, {"tp", t.tp}, {"group", t.group},
               {"builder_heads", t.builder_heads}, {"layer_heads", t.layer_heads},
               {"min_failing_decode_batch", nullptr}};
    if (t.min_failing_decode_batch) tj["min_failing_decode_batch"] = *t.min_failing_decode_batch;
    ts.push_back(std::move(tj));
  }
  return {{"ok", r.ok}, {"violations", vs}, {"thresholds", ts}, {"notes", r.notes}};
}

}  // namespace headroom
