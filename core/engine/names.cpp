// String forms of the engine enums, as the CLI and the case JSON spell them.
#include "core/engine/engine.hpp"
#include "core/util/names.hpp"

namespace headroom {
namespace {

constexpr name_table<backend, 3> backend_names = {
    {{backend::triton, "triton"}, {backend::flashinfer, "flashinfer"}, {backend::fa3, "fa3"}}};
constexpr name_table<grouping, 3> grouping_names = {
    {{grouping::heads, "heads"}, {grouping::legacy, "legacy"}, {grouping::proposer, "proposer"}}};
constexpr name_table<policy, 3> policy_names = {
    {{policy::per_layer, "per-layer"}, {policy::model_wide, "model-wide"}, {policy::max, "max"}}};
constexpr name_table<kv_layout, 2> kv_layout_names = {
    {{kv_layout::separate, "separate"}, {kv_layout::packed, "packed"}}};

}  // namespace

const char* to_string(backend b) { return name_in(backend_names, b); }
const char* to_string(grouping g) { return name_in(grouping_names, g); }
const char* to_string(policy p) { return name_in(policy_names, p); }
const char* to_string(kv_layout k) { return name_in(kv_layout_names, k); }

backend parse_backend(const std::string& s, const std::string& file, const std::string& field) {
  return parse_in(backend_names, s, file, field);
}

grouping parse_grouping(const std::string& s, const std::string& file, const std::string& field) {
  return parse_in(grouping_names, s, file, field);
}

policy parse_policy(const std::string& s, const std::string& file, const std::string& field) {
  return parse_in(policy_names, s, file, field);
}

kv_layout parse_kv_layout(const std::string& s, const std::string& file, const std::string& field) {
  return parse_in(kv_layout_names, s, file, field);
}

}  // namespace headroom
