// The headroom subcommands. Each returns the process exit code: 0 clean, 1 violation found,
// 2 bad input or usage (reported by main from the input_error it throws).
#pragma once

#include <memory>
#include <string>

#include "core/check/check.hpp"

namespace headroom::cli {

int check_main(int argc, char** argv);
int replay_main(int argc, char** argv);
int fuzz_main(int argc, char** argv);

// model | sim | gpu. Throws input_error when the target cannot run here (gpu without a device).
std::unique_ptr<executor> make_executor(const std::string& target);

// Human-readable report on stdout.
void print_report(const report& r, const std::string& title);

}  // namespace headroom::cli
