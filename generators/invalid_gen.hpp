// Generators of INVALID inputs for the bad-input properties: a valid generated config (explicit
// form or Hugging Face form) or case with exactly one defect, and the field the error must name.
// Kept apart from the valid generators, which never filter.
#pragma once

#include <string>

#include <nlohmann/json.hpp>
#include <rapidcheck.h>

namespace headroom::generators {

struct invalid_input {
  nlohmann::json json;
  std::string defect;  // short name of what was broken (RC_CLASSIFY / messages)
  std::string field;   // the field path the input_error must name
};

// Model configs (explicit and Hugging Face forms) with one defect.
rc::Gen<invalid_input> invalid_configs();
// Case files (a valid case's JSON) with one defect outside the model.
rc::Gen<invalid_input> invalid_cases();

}  // namespace headroom::generators
