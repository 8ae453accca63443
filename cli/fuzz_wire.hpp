// What the ranks of an MPI campaign tell rank 0, as JSON text: a failing outcome (index, raw kind,
// and the shrunk counterexample when its rank shrank it) and a shard's counts. Rank 0 replays a
// counterexample before it commits it, so the report itself does not travel. Decoding checks every
// field: a malformed message is an input_error naming the sending rank and the field, not a crash.
#pragma once

#include <string>

#include "cli/fuzz_collector.hpp"
#include "cli/fuzz_shard.hpp"

namespace headroom::cli {

std::string encode_outcome(const shard_outcome& o);
shard_outcome decode_outcome(const std::string& text, const std::string& from);

std::string encode_counts(const shard_counts& c);
shard_counts decode_counts(const std::string& text, const std::string& from);

}  // namespace headroom::cli
