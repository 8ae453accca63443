// The options check and plan share, read from a parsed command line (or, in the Python module,
// from keyword arguments put in the same form): pure parsing, in the library both link.
#pragma once

#include "cli/args.hpp"
#include "core/check/check.hpp"

namespace headroom::cli {

// The --mutant values of a command line, checked against the registry (unknown: input_error).
mutant_set mutants_of(const parsed_args& a);

// The options check and plan share: --tp, --backend, --policy, --grouping, --kv-layout,
// --max-num-seqs, --no-hybrid, --cuda-graph, --mutant and the engine settings flags
// (engine_flags.hpp), values from --engine-args reported where the file gave them.
check_options options_of(const parsed_args& a);

}  // namespace headroom::cli
