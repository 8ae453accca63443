// The catalogue's class checks (docs/catalogue.md): beside the decode sweep of check_group, each
// class looks at one attention group under the case's engine settings and reports what it finds.
// A whole-model check (`sweep`) walks every step the settings let the engine run (capture sizes,
// dummy runs, padded batches, draft passes); a single case (replay, fuzz) runs the case's own step.
// Each finding carries its class and the variable it fails at (a capture size, max_model_len,
// tokens) so that the report's thresholds can give the class's own variable.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/check/group_check.hpp"

namespace headroom {

struct class_finding {
  finding f;             // f.cls is set
  batch where;           // the batch of the replayable case
  step_spec step;        // the step of the replayable case
  std::string variable;  // "capture_size", "max_model_len", "tokens", ... ("" for none)
  int64_t value = 0;     // the variable's value where it failed
};

struct class_scope {
  const group_context& ctx;
  int64_t builder_heads = 0;
  bool sweep = false;  // true: every step the settings allow; false: the case's step only
};

using class_check = void (*)(const class_scope&, std::vector<class_finding>&);

// Every class check, in class order.
std::span<const class_check> class_checks();

}  // namespace headroom
