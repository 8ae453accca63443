// Seeded random geometries for engines' own tests (the Python module's `generate`): a geometry of
// geometry_gen.hpp written as a Hugging Face config.json (per_layer_config and layer_types, as
// transformers saves heterogeneous models), with the explicit form headroom reads it as.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/model/geometry.hpp"

namespace headroom::generators {

// The model as a Hugging Face config: model-wide fields plus one per_layer_config entry per
// attention layer, layer types for every layer ("mamba" for a layer without attention).
nlohmann::json to_hf_config(const model_geometry& m);

struct generated_model {
  uint64_t seed = 0;
  int64_t tp = 1;  // a TP size every layer's heads divide by
  nlohmann::json hf_config;
  nlohmann::json explicit_form;  // parse_model(hf_config) in the explicit form
};

// The same seed always gives the same model; max_layers bounds its layers (1..64).
generated_model generate_model(uint64_t seed, int max_layers = 6);

}  // namespace headroom::generators
