// MPI for the fuzz campaign (mpi_channel.hpp).
#include "cli/mpi/mpi_channel.hpp"

#include <mpi.h>

#include <cstdlib>

namespace headroom::cli {

mpi_world mpi_start(int& argc, char**& argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  mpi_world w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm node;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &node) ==
      MPI_SUCCESS) {
    MPI_Comm_rank(node, &w.local_rank);
    MPI_Comm_free(&node);
  }
  return w;
}

void mpi_end() { MPI_Finalize(); }

void mpi_abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void send_text(const std::string& text, int to, int tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
}

std::optional<mpi_message> poll_message(int from) {
  int flag = 0;
  MPI_Status st;
  if (MPI_Iprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS || !flag) return std::nullopt;
  int n = 0;
  MPI_Get_count(&st, MPI_CHAR, &n);
  mpi_message m{st.MPI_SOURCE, st.MPI_TAG, std::string(static_cast<std::size_t>(n), '\0')};
  MPI_Recv(m.text.data(), n, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return m;
}

int mpi_first_failing(const mpi_world& w, bool failed) {
  int mine = failed ? w.rank : w.size, first = w.size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return first;
}

uint64_t mpi_broadcast_seed(uint64_t seed) {
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

std::chrono::steady_clock::time_point mpi_common_start() {
  MPI_Barrier(MPI_COMM_WORLD);
  return std::chrono::steady_clock::now();
}

}  // namespace headroom::cli
