// headroom fuzz: arrives with the property generators (issue 4).
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "core/util/error.hpp"

namespace headroom::cli {

int fuzz_main(int, char**) {
  throw input_error(cmdline, "fuzz", "(command)", "not built yet");
}

}  // namespace headroom::cli
