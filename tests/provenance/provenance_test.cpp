// core/provenance.json, the table of upstream sources the mirror follows (docs/engines.md,
// "Provenance"): every entry well formed, ids unique, its headroom side present in this tree, and
// every catalogue mutant (all_mutants) and every plan field and buffer the planners produce on
// configs/laguna-xs2.json (Triton, FlashInfer, FA3, through mirror_plan as `headroom plan` uses it,
// the per-step plans, and the fields tools/flashinfer/planner_compare compares) named by an entry.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <variant>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/backends/fa3.hpp"
#include "core/check/builder_dump.hpp"
#include "core/check/mutants.hpp"
#include "core/check/plan_file.hpp"
#include "core/check/plans.hpp"
#include "core/engine/steps.hpp"
#include "core/model/loader.hpp"

namespace headroom {
namespace {

using nlohmann::json;

const std::string source_dir = HEADROOM_SOURCE_DIR;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const json& table() {
  static const json j = json::parse(read_text(source_dir + "/core/provenance.json"));
  return j;
}

std::string id_of(const json& e) {
  return e.contains("id") && e["id"].is_string() ? e["id"].get<std::string>() : "?";
}

bool nonempty_string(const json& e, const char* key) {
  return e.contains(key) && e[key].is_string() && !e[key].get<std::string>().empty();
}

// The names an entry lists under `key` ("fields" or "mutants"), by entry id.
std::map<std::string, std::set<std::string>> named(const char* key) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& e : table())
    if (e.contains(key))
      for (const auto& n : e[key]) out[n.get<std::string>()].insert(id_of(e));
  return out;
}

TEST(Provenance, IsAnArrayOfEntries) {
  ASSERT_TRUE(table().is_array());
  EXPECT_GE(table().size(), 20u);
}

TEST(Provenance, EveryEntryHasTheRequiredFields) {
  const std::regex repo(R"([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)");
  const std::regex commit("unpinned|[0-9a-f]{7,40}");
  const std::regex date(R"(\d{4}-\d{2}-\d{2})");
  for (const auto& e : table()) {
    const std::string id = id_of(e);
    ASSERT_TRUE(e.is_object()) << "entry " << id;
    for (const char* k : {"id", "what", "repo", "path", "commit", "source"})
      EXPECT_TRUE(nonempty_string(e, k)) << "entry " << id << ": '" << k << "' missing or empty";
    // An entry without a symbol stands for the whole file (upstream_drift.py compares all of it).
    EXPECT_TRUE(e.contains("symbol") && e["symbol"].is_string()) << "entry " << id << ": 'symbol' missing";
    if (nonempty_string(e, "repo")) {
      EXPECT_TRUE(std::regex_match(e["repo"].get<std::string>(), repo))
          << "entry " << id << ": repo " << e["repo"];
    }
    if (nonempty_string(e, "path")) {
      const std::string p = e["path"];
      EXPECT_TRUE(p[0] != '/' && p.find("..") == std::string::npos) << "entry " << id << ": path " << p;
    }
    if (nonempty_string(e, "commit")) {
      EXPECT_TRUE(std::regex_match(e["commit"].get<std::string>(), commit))
          << "entry " << id << ": commit " << e["commit"] << " (a hash or \"unpinned\")";
    }
    if (e.contains("verified")) {
      EXPECT_TRUE(e["verified"].is_string() && std::regex_match(e["verified"].get<std::string>(), date))
          << "entry " << id << ": verified " << e["verified"];
      EXPECT_NE(e.value("commit", ""), "unpinned") << "entry " << id << ": verified but unpinned";
    }
    ASSERT_TRUE(e.contains("headroom") && e["headroom"].is_array() && !e["headroom"].empty())
        << "entry " << id << ": 'headroom' must list the mirror's files";
    for (const auto& h : e["headroom"])
      EXPECT_TRUE(nonempty_string(h, "file") && nonempty_string(h, "symbol"))
          << "entry " << id << ": a headroom item needs 'file' and 'symbol'";
    for (const char* k : {"fields", "mutants"})
      if (e.contains(k)) {
        ASSERT_TRUE(e[k].is_array() && !e[k].empty()) << "entry " << id << ": '" << k << "' is a list";
        for (const auto& n : e[k]) EXPECT_TRUE(n.is_string()) << "entry " << id << ": '" << k << "'";
      }
  }
}

TEST(Provenance, IdsAreUnique) {
  std::set<std::string> seen;
  for (const auto& e : table()) EXPECT_TRUE(seen.insert(id_of(e)).second) << "duplicate id " << id_of(e);
}

// The mirror's side of each entry exists: the file in this tree, the symbol in it.
TEST(Provenance, HeadroomSideExists) {
  for (const auto& e : table())
    for (const auto& h : e.value("headroom", json::array())) {
      const std::string file = h.value("file", ""), symbol = h.value("symbol", "");
      const std::string path = source_dir + "/" + file;
      ASSERT_TRUE(std::filesystem::is_regular_file(path)) << "entry " << id_of(e) << ": no file " << file;
      EXPECT_NE(read_text(path).find(symbol), std::string::npos)
          << "entry " << id_of(e) << ": " << file << " does not mention " << symbol;
    }
}

TEST(Provenance, EveryMutantHasAnEntry) {
  const auto by_mutant = named("mutants");
  std::set<std::string> registry;
  for (const auto& m : all_mutants()) {
    registry.insert(std::string(m.name));
    EXPECT_TRUE(by_mutant.count(std::string(m.name)))
        << "mutant '" << m.name << "' (" << m.sources << ") has no provenance entry naming it in \"mutants\"";
  }
  for (const auto& [name, ids] : by_mutant)
    EXPECT_TRUE(registry.count(name)) << "entry " << *ids.begin() << " names mutant '" << name
                                      << "', which the registry (headroom mutants) does not have";
}

// ---- the plan fields and buffers the planners produce, qualified by planner:
//   triton:NAME, flashinfer:NAME, fa3:NAME         builders as `headroom plan` dumps them, and the
//                                                  per-step plans' buffers by the engine's names
//   flashinfer.decode:NAME, flashinfer.prefill:NAME  FlashInfer's DecodePlan / PrefillPlan fields
//                                                  (planner_compare) and their workspace parts
//   flashinfer.prefill_sm90:NAME                   PrefillSM90Plan's (planner_compare --sm90)

const char* qualifier(backend be) {
  switch (be) {
    case backend::triton:
      return "triton";
    case backend::flashinfer:
      return "flashinfer";
    case backend::fa3:
      return "fa3";
  }
  return "?";
}

void add_step_plans(const check_case& c, const engine& e, std::map<std::string, std::string>& out) {
  const std::vector<batch> batches = {decode_batch(1, 256), decode_batch(8, 256), decode_batch(64, 4096),
                                      batch{{4096}, {4096}}, batch{{256, 2048}, {1, 512}}};
  for (const auto& ag : e.groups) {
    const auto hr = resolve_heads(e.reg, ag.builder_layers, effective_policy(c), e.rg.model_wide_heads);
    for (const auto& b : batches)
      for (const auto& part : plan_parts(c, e.rg, ag, hr.builder_heads, b)) {
        std::string q = qualifier(ag.be);
        if (std::holds_alternative<fi_decode_plan>(part.plan)) q = "flashinfer.decode";
        if (std::holds_alternative<fi_prefill_plan>(part.plan)) q = "flashinfer.prefill";
        if (std::holds_alternative<fi_prefill_sm90_plan>(part.plan)) q = "flashinfer.prefill_sm90";
        for (const auto& buf : plan_buffers(part.plan))
          out.emplace(q + ":" + engine_buffer_name(ag.be, buf.name), "the per-step plan of a batch");
      }
  }
}

// name -> where it came from, for the failure message.
std::map<std::string, std::string> plan_field_names() {
  std::map<std::string, std::string> out;
  const std::string config = source_dir + "/configs/laguna-xs2.json";
  const model_geometry m = load_model(config);
  check_options o;
  o.backends = {backend::triton, backend::flashinfer, backend::fa3};
  check_options fa3 = o;  // --flashinfer-prefill fa3: PrefillSM90Plan's fields as plan parameters
  fa3.flashinfer.prefill_sm90 = true;
  check_options automatic = o;  // --flashinfer-prefill auto: each wrapper's resolved backend
  automatic.flashinfer.prefill_auto = true;
  for (const plan_file& p : {mirror_plan(m, o), mirror_plan(m, fa3), mirror_plan(m, automatic)})
    for (const auto& r : p.ranks)
      for (const auto& g : r.groups) {
        const std::string q = qualifier(g.be);
        for (const auto& [name, value] : g.parameters)
          out.emplace(q + ":" + name, "mirror_plan (headroom plan) parameter");
        for (const auto& b : g.buffers) out.emplace(q + ":" + b.name, "mirror_plan (headroom plan) buffer");
      }
  for (backend be : {backend::triton, backend::flashinfer}) {
    for (bool tensor_cores : {false, true})
      for (bool sm90 : {false, true}) {
        check_case c = make_case(m, 1, be, o.pol, o.grp, o.hybrid, o.block_size, 0);
        c.flashinfer.tensor_core_decode = tensor_cores;
        c.flashinfer.prefill_sm90 = sm90;
        add_step_plans(c, make_engine(c), out);
      }
  }
  const engine_settings s;
  for (const auto& b : {decode_batch(4, 256), decode_batch(256, 256)}) {
    const fa3_plan f = plan_fa3(s, forward_step(s, b), fa3_group{48, 8, 128, 16, 0}, fa3_mutants{});
    for (const auto& buf : f.buffers) out.emplace(std::string("fa3:") + buf.name, "plan_fa3 buffer");
  }
  // The fields planner_compare checks against FlashInfer's own planner: `t.add("NAME", ...)`, those
  // under `if (in.prefill)` only for PrefillPlan.
  const std::string driver = read_text(source_dir + "/tools/flashinfer/planner_compare.cpp");
  const std::regex add(R"re((if \(in\.prefill\)\s*)?t\.add\("(\w+)")re");
  for (auto it = std::sregex_iterator(driver.begin(), driver.end(), add); it != std::sregex_iterator();
       ++it) {
    const std::string name = (*it)[2];
    if (name == "planner_error") continue;
    out.emplace("flashinfer.prefill:" + name, "tools/flashinfer/planner_compare.cpp field");
    if (!(*it)[1].matched)
      out.emplace("flashinfer.decode:" + name, "tools/flashinfer/planner_compare.cpp field");
  }
  // And those its --sm90 mode checks against PrefillSM90Plan: `c.field("NAME", ...)`.
  const std::string sm90 = read_text(source_dir + "/tools/flashinfer/sm90_compare.cpp");
  const std::regex field(R"re(c\.field\("(\w+)")re");
  for (auto it = std::sregex_iterator(sm90.begin(), sm90.end(), field); it != std::sregex_iterator(); ++it)
    if ((*it)[1] != "planner_error")
      out.emplace("flashinfer.prefill_sm90:" + (*it)[1].str(), "tools/flashinfer/sm90_compare.cpp field");
  return out;
}

TEST(Provenance, EveryPlanFieldHasAnEntry) {
  const auto produced = plan_field_names();
  const auto by_field = named("fields");
  // The gathering itself found what it should (a change of the planners' API shows here first).
  for (const char* must : {"triton:seq_threshold_3D", "triton:softmax_segm_output", "flashinfer:num_qo_heads",
                           "flashinfer.decode:tmp_s", "flashinfer.prefill:padded_batch_size",
                           "fa3:scheduler_metadata", "flashinfer.prefill_sm90:work_indptr"})
    EXPECT_TRUE(produced.count(must)) << "the planners no longer produce " << must;
  for (const auto& [name, from] : produced)
    EXPECT_TRUE(by_field.count(name))
        << "plan field '" << name << "' (" << from << ") has no provenance entry naming it in \"fields\"";
  for (const auto& [name, ids] : by_field)
    EXPECT_TRUE(produced.count(name)) << "entry " << *ids.begin() << " names field '" << name
                                      << "', which no planner produces on configs/laguna-xs2.json";
}

}  // namespace
}  // namespace headroom
