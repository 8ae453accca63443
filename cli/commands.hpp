// The headroom subcommands. Each returns the process exit code: 0 clean, 1 violation found,
// 2 bad input or usage (reported by main from the input_error it throws).
#pragma once

#include <memory>
#include <string>

#include "cli/args.hpp"
#include "cli/options.hpp"
#include "core/check/check.hpp"
#include "core/check/plan_file.hpp"
#include "core/util/error.hpp"

namespace headroom::cli {

int check_main(int argc, char** argv);
int replay_main(int argc, char** argv);
int fuzz_main(int argc, char** argv);
int mutants_main(int argc, char** argv);
int plan_main(int argc, char** argv);
int verify_main(int argc, char** argv);

// model | sim | gpu. Throws input_error when the target cannot run here (gpu without a device).
std::unique_ptr<executor> make_executor(const std::string& target);

// Runs a check of the input `file`: an input_error that names no file (a target's limit on a layer,
// thrown where the file is not known) is attributed to it.
template <class Check>
report attributed_to(const std::string& file, Check&& check) {
  try {
    return check();
  } catch (const input_error& e) {
    throw e.in_file(file);
  }
}

// Human-readable report on stdout.
void print_report(const report& r, const std::string& title);
// Human-readable plan on stdout (headroom plan).
void print_plan(const plan_file& p, const std::string& title);

}  // namespace headroom::cli
