// The little of MPI the fuzz campaign uses, over MPI_COMM_WORLD: start and end, text messages by
// tag, polled (never a blocking receive, which would spin a core), and the collective steps of
// the start (who failed, the seed, a common time origin). Errors return instead of aborting, so a
// message to a rank that died does not take rank 0 down before it has committed its findings.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace headroom::cli {

enum mpi_tag : int {
  tag_outcome = 1,  // rank > 0 -> 0: a failing outcome (fuzz_wire.hpp)
  tag_counts,       // rank > 0 -> 0: the shard's counts
  tag_error,        // rank > 0 -> 0: the shard stopped on an error (one line)
  tag_kind,         // 0 -> rank: a raw kind committed
  tag_stop,         // 0 -> rank: run no new cases
  tag_finish,       // 0 -> rank: everything is committed, finalize
};

struct mpi_world {
  int rank = 0, size = 1;
  int local_rank = 0;  // among the ranks of this node
};

mpi_world mpi_start(int& argc, char**& argv);
void mpi_end();
[[noreturn]] void mpi_abort(int code);

void send_text(const std::string& text, int to, int tag);
struct mpi_message {
  int from = 0, tag = 0;
  std::string text;
};
// The next message from `from` (MPI_ANY_SOURCE: anyone), when one is waiting.
std::optional<mpi_message> poll_message(int from);

// Collective: the smallest rank that failed, w.size when none did.
int mpi_first_failing(const mpi_world& w, bool failed);
// Collective: rank 0's seed.
uint64_t mpi_broadcast_seed(uint64_t seed);
// Collective: a barrier, then this rank's clock (the ranks leave it within microseconds).
std::chrono::steady_clock::time_point mpi_common_start();

}  // namespace headroom::cli
