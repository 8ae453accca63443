// The engine settings of check and plan on the command line (flag_tables.cpp's engine flags, named
// as vLLM names them) and from --engine-args FILE, a JSON file of vLLM's own engine arguments
// (docs/design.md "Command line": which keys are read, which are ignored, which are refused).
#pragma once

#include <optional>

#include "cli/args.hpp"
#include "core/check/check.hpp"

namespace headroom::cli {

// Reads the --engine-args file, if given: each setting it holds becomes the value of its flag,
// unless the command line gives that flag (the command line overrides the file); a.origins
// remembers the file and key, so read_attributed reports a bad value there. Unknown keys,
// values of the wrong type and settings the mirror does not model are input_errors naming the
// file and the key.
void merge_engine_args(parsed_args& a);

// The engine settings flags applied to `o`: o.engine, o.block_size (and FlashInfer's page size).
// o.max_num_seqs must be read already (--max-num-batched-tokens is at least it).
void read_engine_flags(const parsed_args& a, check_options& o);

// The dtype --kv-cache-dtype or --dtype asks for (nullopt: auto, the config's). The mirror has one
// dtype for the KV cache, queries and outputs; --kv-cache-dtype other than auto wins.
std::optional<dtype> dtype_of(const parsed_args& a);

}  // namespace headroom::cli
