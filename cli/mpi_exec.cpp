// headroom (built without MPI) under an MPI launcher: exec the headroom_mpi beside this program,
// which keeps the process and so the launcher's rank; without one, a single rank runs the campaign
// alone and more than one is bad input (mpi_launch.hpp).
#include <unistd.h>
#include <climits>
#include <string>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/mpi_launch.hpp"
#include "core/util/error.hpp"

namespace headroom::cli {

namespace {

std::string sibling(const char* name) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return {};
  const std::string self(buf, static_cast<std::size_t>(n));
  const auto slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/" + name;
}

}  // namespace

int fuzz_under_mpi(int argc, char** argv) {
  const std::string mpi = sibling("headroom_mpi");
  if (!mpi.empty() && ::access(mpi.c_str(), X_OK) == 0) {
    argv[0] = const_cast<char*>(mpi.c_str());
    ::execv(mpi.c_str(), argv);  // returns only on failure: said below
  }
  const auto size = mpi_size_from_env();
  if (size && *size == 1) return fuzz_main(argc, argv);
  if (mpi_rank_from_env().value_or(0) > 0) {  // rank 0 says why, once; mpirun ends the job when it
    ::sleep(5);                               // exits, so the others wait rather than race it
    return 2;
  }
  throw input_error(cmdline, "mpirun", size ? std::to_string(*size) + " ranks" : "(ranks)",
                    "this headroom has no headroom_mpi beside it (built without an MPI library): "
                    "install libopenmpi-dev and rebuild, or run fuzz without mpirun");
}

}  // namespace headroom::cli
