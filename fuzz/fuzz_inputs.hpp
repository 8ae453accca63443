// What one fuzz input must satisfy, shared by the libFuzzer targets (fuzz_config.cpp,
// fuzz_case.cpp, fuzz_plan.cpp) and the replay of stored crash inputs (tests/fuzz): the bytes, as the
// contents of an input file, are either accepted or refused with an input_error whose message is one bounded
// line; an accepted input round-trips through its JSON form unchanged. Any other exception
// escapes, and a broken property aborts: both are findings.
#pragma once

#include <string_view>

namespace headroom::fuzz {

// A config file (core/model/loader.hpp), then its per-rank views at tp 1, 2, 4 and 8.
void config_input(std::string_view bytes);

// A case file (core/check/case.hpp).
void case_input(std::string_view bytes);

// A plan file (core/check/plan_file.hpp) as `headroom verify` takes it: read, and when accepted
// (its JSON form read back gives the same JSON), checked by run_verify on the formulas (the model
// executor: plans made and judged, no kernel run); the check may refuse it only with an input_error.
void plan_input(std::string_view bytes);

}  // namespace headroom::fuzz
