// Model config loading (docs/engines.md §2): a Hugging Face config.json as-is (with adapters for the
// heterogeneous formats) or headroom's explicit per-layer form, into one validated
// model_geometry. Every failure is an input_error naming the file, the field and the value.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/model/geometry.hpp"
#include "core/util/error.hpp"

namespace headroom {

// Reads and parses a config file. A missing or unreadable file names the field "<file>"; malformed
// JSON names "<json>" with the parser's position and message.
model_geometry load_model(const std::string& path);

// Parses an already-read config: the explicit form when the top level has a "layers" array, else
// a Hugging Face config.json. The result has passed validate(); `source` names messages.
model_geometry parse_model(const nlohmann::json& j, const std::string& source);

// The explicit form: {"name", "num_attention_heads", "num_key_value_heads", "head_dim", "dtype",
// "layers": [{"name", "type", "num_heads", "num_kv_heads", "head_size", "head_size_v",
// "sliding_window"}, ...]}. parse_model(to_json(m), s) == m for every valid m.
nlohmann::json to_json(const model_geometry& m);

}  // namespace headroom
