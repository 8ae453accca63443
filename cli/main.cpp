// headroom: the command line (docs/design.md). Dispatches to a subcommand and maps errors to exit codes:
// input_error -> 2 with its one-line message; anything unexpected -> 2 with "internal error". A
// usage error (no command, an unknown one) is one line too; only --help prints the usage, and
// `CMD --help` the command's help, both generated from the flag tables (flags.hpp).
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "cli/mpi_launch.hpp"
#include "core/util/error.hpp"
#include "core/util/one_line.hpp"

int main(int argc, char** argv) {
  std::signal(SIGXFSZ, SIG_IGN);  // past a file-size limit a write fails (EFBIG): exit 2, one line
  if (argc < 2) {
    std::cerr
        << "headroom: no command given (check, replay, fuzz, mutants, plan or verify); see headroom --help\n";
    return 2;
  }
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(headroom::cli::overall_usage().c_str(), stdout);
    return 0;
  }
  const std::string cmd = argv[1];
  for (int i = 2; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {  // the command's own help
      const auto* spec = headroom::cli::find_command(cmd);
      std::fputs((spec ? headroom::cli::command_help(*spec) : headroom::cli::overall_usage()).c_str(),
                 stdout);
      return 0;
    }
  try {
    if (cmd == "check") return headroom::cli::check_main(argc, argv);
    if (cmd == "replay") return headroom::cli::replay_main(argc, argv);
    if (cmd == "fuzz")  // one campaign sharded by rank under mpirun or srun
      return headroom::cli::under_mpi_launcher() ? headroom::cli::fuzz_under_mpi(argc, argv)
                                                 : headroom::cli::fuzz_main(argc, argv);
    if (cmd == "mutants") return headroom::cli::mutants_main(argc, argv);
    if (cmd == "plan") return headroom::cli::plan_main(argc, argv);
    if (cmd == "verify") return headroom::cli::verify_main(argc, argv);
    std::cerr << "headroom: unknown command '" << headroom::one_line(cmd)
              << "' (expected check, replay, fuzz, mutants, plan or verify); see headroom --help\n";
    return 2;
  } catch (const headroom::input_error& e) {
    std::cerr << "headroom: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "headroom: internal error: " << headroom::one_line(e.what()) << "\n";
    return 2;
  }
}
