// headroom: the command line (docs/design.md). Dispatches to a subcommand and maps errors to exit codes:
// input_error -> 2 with its one-line message; anything unexpected -> 2 with "internal error". A
// usage error (no command, an unknown one) is one line too; only --help prints the usage.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/mpi_launch.hpp"
#include "core/util/error.hpp"
#include "core/util/one_line.hpp"

namespace {

const char* usage =
    "usage:\n"
    "  headroom check CONFIG.json [--tp 1,2,4,8] [--backend triton|flashinfer|fa3|all]\n"
    "                 [--policy per-layer|model-wide|max] [--grouping heads|legacy|proposer]\n"
    "                 [--max-num-seqs N] [--target model|sim|gpu] [--tight K] [--json OUT.json]\n"
    "                 [--seed S] [--no-hybrid] [--cuda-graph] [--mutant NAME]...\n"
    "                 [--kv-layout separate|packed]   (default packed: vLLM's KV cache since #44455)\n"
    "                 [--max-model-len N] [--spec-tokens K] [--cudagraph-mode MODE]\n"
    "                 [--head-tile N] [--mamba-block-size N] [--extra-group-block-size N]\n"
    "  headroom fuzz  [--seed S] [--cases N | --time 60s] [--target sim|gpu] [--policy ...]\n"
    "                 [--out DIR] [--jobs N] [--grouping G] [--backend triton|flashinfer|fa3|all]\n"
    "                 [--stop-after K] [--mutant NAME]... [--kv-layout separate|packed]\n"
    "                 (default --cases 1000; --out is created if missing; cases draw both\n"
    "                  KV-cache layouts unless --kv-layout pins one;\n"
    "                  mpirun -np N headroom fuzz ...: one campaign sharded by rank)\n"
    "  headroom replay FILE [--target model|sim|gpu] [--violation N] [--mutant NAME]... [--json OUT.json]\n"
    "                 (FILE: a case, or a report written by --json)\n"
    "  headroom plan CONFIG.json [--tp 1,2,4,8] [--backend triton|flashinfer|fa3|all] [--policy ...]\n"
    "                 [--grouping ...] [--max-num-seqs N] [--no-hybrid] [--cuda-graph]\n"
    "                 [--mutant NAME]... [--json OUT.json]   (the mirror's plan: docs/plan-schema.md)\n"
    "  headroom verify PLAN.json [--target model|sim|gpu] [--tight K] [--json OUT.json]\n"
    "                 (checks a plan an engine dumped, or an edited plan --json)\n"
    "  headroom mutants [--json OUT.json|-]   (the catalogue's historical wrong formulas)\n"
    "exit codes: 0 every invariant holds, 1 a violation was found, 2 bad input or usage\n";

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGXFSZ, SIG_IGN);  // past a file-size limit a write fails (EFBIG): exit 2, one line
  if (argc < 2) {
    std::cerr
        << "headroom: no command given (check, replay, fuzz, mutants, plan or verify); see headroom --help\n";
    return 2;
  }
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(usage, stdout);
    return 0;
  }
  const std::string cmd = argv[1];
  for (int i = 2; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::fputs(usage, stdout);
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
