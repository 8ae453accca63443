// The options a fuzz command line gives, read by the command's own parser: the pin and draw tests
// sample the campaign's cases from them.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli/fuzz_campaign.hpp"

namespace headroom_test {

// The options `headroom fuzz --seed 7 --cases 400 FLAGS` runs with.
inline headroom::cli::fuzz_options fuzz_options_of(const std::string& flags) {
  std::vector<std::string> words = {"headroom", "fuzz", "--seed", "7", "--cases", "400"};
  std::istringstream in(flags);
  for (std::string w; in >> w;) words.push_back(w);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return headroom::cli::read_fuzz_options(static_cast<int>(argv.size()), argv.data());
}

}  // namespace headroom_test
