// JSON of a case's engine settings, step and mutants (the "engine", "step" and "mutants" keys of a
// case file), with every field range-checked (input_error naming file and field).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"
#include "core/check/mutants.hpp"
#include "core/engine/settings.hpp"

namespace headroom {

nlohmann::json to_json(const engine_settings& s);
// Missing keys keep the defaults; `path` prefixes field names (e.g. "engine.").
engine_settings settings_from_json(const nlohmann::json& j, const std::string& file, const std::string& path);

nlohmann::json to_json(const step_spec& s);
step_spec step_from_json(const nlohmann::json& j, const std::string& file, const std::string& path);

// The "triton" and "flashinfer" option objects of a case or plan. flashinfer_from_json names its
// fields under `path` + "flashinfer.".
nlohmann::json to_json(const triton_options& t);
nlohmann::json to_json(const flashinfer_options& f);
flashinfer_options flashinfer_from_json(const nlohmann::json& j, const std::string& file,
                                        const std::string& path);

mutant_set mutants_from_json(const nlohmann::json& j, const std::string& file, const std::string& path);

}  // namespace headroom
