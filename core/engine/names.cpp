// String forms of the engine enums, as the CLI and the case JSON spell them.
#include "core/engine/engine.hpp"
#include "core/util/error.hpp"

namespace headroom {

const char* to_string(backend b) {
  switch (b) {
    case backend::triton: return "triton";
    case backend::flashinfer: return "flashinfer";
    case backend::fa3: return "fa3";
  }
  return "?";
}

const char* to_string(grouping g) {
  switch (g) {
    case grouping::heads: return "heads";
    case grouping::legacy: return "legacy";
    case grouping::proposer: return "proposer";
  }
  return "?";
}

const char* to_string(policy p) {
  switch (p) {
    case policy::per_layer: return "per-layer";
    case policy::model_wide: return "model-wide";
    case policy::max: return "max";
  }
  return "?";
}

backend parse_backend(const std::string& s, const std::string& file, const std::string& field) {
  if (s == "triton") return backend::triton;
  if (s == "flashinfer") return backend::flashinfer;
  if (s == "fa3") return backend::fa3;
  throw input_error(file, field, "\"" + s + "\"", "expected triton, flashinfer or fa3");
}

grouping parse_grouping(const std::string& s, const std::string& file, const std::string& field) {
  if (s == "heads") return grouping::heads;
  if (s == "legacy") return grouping::legacy;
  if (s == "proposer") return grouping::proposer;
  throw input_error(file, field, "\"" + s + "\"", "expected heads, legacy or proposer");
}

policy parse_policy(const std::string& s, const std::string& file, const std::string& field) {
  if (s == "per-layer") return policy::per_layer;
  if (s == "model-wide") return policy::model_wide;
  if (s == "max") return policy::max;
  throw input_error(file, field, "\"" + s + "\"", "expected per-layer, model-wide or max");
}

}  // namespace headroom
