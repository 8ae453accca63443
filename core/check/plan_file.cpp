// Plan files: JSON in both directions. Reading checks every field and the plan against itself
// (its layers against its model, its groups against its layers) before any work.
#include <algorithm>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/check/plan_file.hpp"
#include "core/check/settings_json.hpp"
#include "core/model/loader.hpp"
#include "core/util/json_file.hpp"
#include "core/util/json_read.hpp"

namespace headroom {
namespace jr = json_read;
using nlohmann::json;

namespace {

json layer_json(const rank_layer& l) {
  return {{"name", l.name},           {"kind", to_string(l.kind)},
          {"num_heads", l.num_heads}, {"num_kv_heads", l.num_kv_heads},
          {"head_size", l.head_size}, {"sliding_window", l.sliding_window}};
}

// A rank's layer table, when given, must be what the model gives at that tp.
void check_layers(const json& layers, const rank_geometry& rg, const std::string& file,
                  const std::string& path) {
  if (!layers.is_array() || layers.size() != rg.layers.size())
    throw input_error(file, path, jr::shown(layers),
                      "expected the " + std::to_string(rg.layers.size()) +
                          " attention layers of the model at tp " + std::to_string(rg.tp));
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const rank_layer& want = rg.layers[i];
    const std::string p = path + "[" + std::to_string(i) + "].";
    const std::string name = jr::get_string(layers[i], "name", file, p);
    if (name != want.name)
      throw input_error(file, p + "name", "\"" + name + "\"", "the model's layer here is " + want.name);
    const std::pair<const char*, int64_t> fields[] = {{"num_heads", want.num_heads},
                                                      {"num_kv_heads", want.num_kv_heads},
                                                      {"head_size", want.head_size},
                                                      {"sliding_window", want.sliding_window}};
    for (const auto& [key, value] : fields) {
      if (!layers[i].contains(key)) continue;
      const int64_t got = jr::get_int(layers[i], key, file, p, 0, int64_t{1} << 40);
      if (got != value)
        throw input_error(file, p + key, std::to_string(got),
                          "the model gives " + std::to_string(value) + " at tp " + std::to_string(rg.tp));
    }
  }
}

// A group's layers exist at this rank, share one KV spec, and are in no other group of its backend.
void check_group(const builder_dump& d, const registry& reg, std::set<std::pair<int, std::string>>& used,
                 const std::string& file, const std::string& path) {
  const rank_layer* first = nullptr;
  for (std::size_t i = 0; i < d.layers.size(); ++i) {
    const std::string p = path + "layers[" + std::to_string(i) + "]";
    const rank_layer* l = reg.find(d.layers[i]);
    if (!l)
      throw input_error(file, p, "\"" + d.layers[i] + "\"", "no attention layer of this name at this rank");
    if (!used.insert({static_cast<int>(d.be), d.layers[i]}).second)
      throw input_error(file, p, "\"" + d.layers[i] + "\"", "already in another group of this backend");
    if (!first) first = l;
    if (l->num_kv_heads != first->num_kv_heads || l->head_size != first->head_size ||
        l->sliding_window != first->sliding_window)
      throw input_error(file, p, "\"" + d.layers[i] + "\"",
                        "its KV spec differs from the group's first layer " + first->name);
  }
}

// The KV-cache group a dumped group names exists, and holds the group's layers.
void check_kv_group(const builder_dump& d, const std::vector<kv_cache_group>& kv, const std::string& file,
                    const std::string& path) {
  if (d.kv_group < 0 || static_cast<std::size_t>(d.kv_group) >= kv.size())
    throw input_error(file, path + "kv_cache_group", std::to_string(d.kv_group),
                      "this rank has " + std::to_string(kv.size()) + " KV-cache groups (0.." +
                          std::to_string(static_cast<int64_t>(kv.size()) - 1) + ")");
  const auto& names = kv[static_cast<std::size_t>(d.kv_group)].layers;
  for (std::size_t i = 0; i < d.layers.size(); ++i)
    if (std::find(names.begin(), names.end(), d.layers[i]) == names.end())
      throw input_error(file, path + "layers[" + std::to_string(i) + "]", "\"" + d.layers[i] + "\"",
                        "not in KV-cache group " + std::to_string(d.kv_group));
}

plan_rank rank_from_json(const json& j, const model_geometry& m, int64_t block_size, bool hybrid,
                         const std::string& file, const std::string& path) {
  plan_rank r;
  r.tp = jr::get_int(j, "tp", file, path, 1, max_tp);
  const rank_geometry rg = to_rank(m, r.tp);
  if (j.contains("layers")) check_layers(j.at("layers"), rg, file, path + "layers");
  const registry reg = make_registry(rg);
  const std::vector<kv_cache_group> kv =
      make_kv_cache_groups(reg, m.kv_dtype, block_size, hybrid, m.kv_cache);
  const json& groups = jr::field(j, "groups", file, path);
  if (!groups.is_array() || groups.size() > static_cast<std::size_t>(max_layers))
    throw input_error(file, path + "groups", jr::shown(groups), "expected a list of attention groups");
  std::set<std::pair<int, std::string>> used;
  std::set<std::pair<int, int>> indices;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::string p = path + "groups[" + std::to_string(i) + "].";
    builder_dump d = builder_dump_from_json(groups[i], file, p);
    if (!indices.insert({static_cast<int>(d.be), d.index}).second)
      throw input_error(file, p + "group", std::to_string(d.index), "given twice for this backend");
    check_group(d, reg, used, file, p);
    check_kv_group(d, kv, file, p);
    r.groups.push_back(std::move(d));
  }
  return r;
}

}  // namespace

json to_json(const plan_file& p) {
  json ranks = json::array();
  for (const auto& r : p.ranks) {
    json layers = json::array();
    for (const auto& l : to_rank(p.model, r.tp).layers) layers.push_back(layer_json(l));
    json groups = json::array();
    for (const auto& g : r.groups) groups.push_back(to_json(g));
    ranks.push_back({{"tp", r.tp}, {"layers", layers}, {"groups", groups}});
  }
  return {{"headroom_plan", plan_schema_version},
          {"source", p.source},
          {"model", to_json(p.model)},
          {"engine", to_json(p.engine)},
          {"kv_cache", {{"block_size", p.block_size}, {"hybrid", p.hybrid}, {"layout", to_string(p.layout)}}},
          {"flashinfer", to_json(p.flashinfer)},
          {"ranks", ranks},
          {"notes", p.notes}};
}

plan_file plan_from_json(const json& j, const std::string& file) {
  if (!j.is_object()) throw input_error(file, "<plan>", jr::shown(j), "a plan is a JSON object");
  const int64_t version = jr::get_int(j, "headroom_plan", file, "", 0, 1 << 20);
  if (version != plan_schema_version)
    throw input_error(file, "headroom_plan", std::to_string(version),
                      "this headroom reads plan schema version " + std::to_string(plan_schema_version));
  plan_file p;
  if (j.contains("source")) p.source = jr::get_string(j, "source", file, "");
  p.model = parse_model(jr::field(j, "model", file, ""), file);
  if (j.contains("engine")) p.engine = settings_from_json(j.at("engine"), file, "engine.");
  if (p.engine.max_num_seqs > max_check_num_seqs)
    throw input_error(
        file, "engine.max_num_seqs", std::to_string(p.engine.max_num_seqs),
        "verify sweeps decode batches 1..max_num_seqs: at most " + std::to_string(max_check_num_seqs));
  if (j.contains("kv_cache")) {
    const json& kv = jr::get_object(j, "kv_cache", file, "");
    p.block_size = jr::get_int_or(kv, "block_size", p.block_size, file, "kv_cache.", 1, 1 << 16);
    p.hybrid = jr::get_bool_or(kv, "hybrid", p.hybrid, file, "kv_cache.");
    if (kv.contains("layout"))
      p.layout = parse_kv_layout(jr::get_string(kv, "layout", file, "kv_cache."), file, "kv_cache.layout");
  }
  if (j.contains("flashinfer"))
    p.flashinfer = flashinfer_from_json(jr::get_object(j, "flashinfer", file, ""), file, "");
  const json& ranks = jr::field(j, "ranks", file, "");
  if (!ranks.is_array() || ranks.empty() || ranks.size() > 64)
    throw input_error(file, "ranks", jr::shown(ranks), "expected a list of 1..64 ranks");
  std::set<int64_t> tps;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const std::string path = "ranks[" + std::to_string(i) + "].";
    p.ranks.push_back(rank_from_json(ranks[i], p.model, p.block_size, p.hybrid, file, path));
    if (!tps.insert(p.ranks.back().tp).second)
      throw input_error(file, path + "tp", std::to_string(p.ranks.back().tp), "given twice");
  }
  return p;
}

plan_file load_plan(const std::string& path) {
  return read_json_input(path, [&](const json& j) { return plan_from_json(j, path); });
}

}  // namespace headroom
