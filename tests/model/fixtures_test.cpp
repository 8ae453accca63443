// The CLI's bad-input corpus (tests/bad_inputs/cases.txt) checked against the library itself:
// every case whose EXTRA_ARGS are empty or a list of integer TP sizes must throw input_error from
// load_model or to_rank, naming every expected substring and the file. Cases whose arguments do
// not parse as integers (--tp abc) belong to the CLI alone and are skipped here.
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "core/model/loader.hpp"
#include "model_test_util.hpp"

namespace headroom::test {
namespace {

struct bad_case {
  std::string file, extra, flags;
  std::vector<std::string> expected;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

std::vector<bad_case> read_cases() {
  std::ifstream in(source_path("tests/bad_inputs/cases.txt"));
  std::vector<bad_case> cases;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto f = split(line, '|');
    if (f.size() < 3) throw std::runtime_error("bad line in cases.txt: " + line);
    cases.push_back({f[0], f[1], f.size() > 3 ? f[3] : "", split(f[2], ';')});
  }
  return cases;
}

// "--tp 1,2,3" -> {1, 2, 3}; nullopt when the arguments are anything else.
std::optional<std::vector<int64_t>> tp_list(const std::string& extra) {
  if (extra.empty()) return std::vector<int64_t>{1, 2, 4, 8};  // the CLI's default
  if (extra.rfind("--tp ", 0) != 0) return std::nullopt;
  std::vector<int64_t> tps;
  for (const std::string& v : split(extra.substr(5), ',')) {
    std::size_t used = 0;
    try {
      tps.push_back(std::stoll(v, &used));
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (used != v.size()) return std::nullopt;
  }
  return tps;
}

TEST(fixtures, corpus_is_rejected_by_the_library) {
  const std::vector<bad_case> cases = read_cases();
  EXPECT_GE(cases.size(), 30u);
  int checked = 0;
  for (const bad_case& c : cases) {
    const auto tps = tp_list(c.extra);
    if (!tps) continue;
    SCOPED_TRACE(c.file + "|" + c.extra);
    const std::string path = source_path("tests/bad_inputs/" + c.file);
    std::vector<std::string> pieces = c.expected;
    pieces.push_back(std::filesystem::path(c.file).filename().string());
    expect_input_error(
        [&] {
          const model_geometry m = load_model(path);
          for (int64_t tp : *tps) to_rank(m, tp);
        },
        pieces);
    ++checked;
  }
  EXPECT_GE(checked, 30);
}

TEST(fixtures, valid_only_without_their_tp) {
  // The TP fixtures are valid configs: only the TP named on their line rejects them.
  for (const char* name : {"tp_per_layer.json", "kv_tp3.json"}) {
    const model_geometry m = load_model(source_path(std::string("tests/bad_inputs/") + name));
    for (int64_t tp : {1, 2, 4, 8}) EXPECT_NO_THROW(to_rank(m, tp)) << name << " tp " << tp;
  }
}

}  // namespace
}  // namespace headroom::test
