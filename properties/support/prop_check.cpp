// Profiles, seeds and failure messages for the property suites (prop_check.hpp).
#include "properties/support/prop_check.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace headroom::props {

namespace {

uint64_t seed_from_env() {
  if (const char* s = std::getenv("HEADROOM_SEED"); s && *s) return std::strtoull(s, nullptr, 10);
  return static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
}

profile_kind kind_from_env() {
  const char* p = std::getenv("HEADROOM_PROFILE");
  if (!p || std::string(p).empty() || std::string(p) == "ci") return profile_kind::ci;
  if (std::string(p) == "campaign") return profile_kind::campaign;
  std::cerr << "HEADROOM_PROFILE=" << p << " is not ci or campaign; using ci\n";
  return profile_kind::ci;
}

std::string test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info ? std::string(info->test_suite_name()) + "." + info->name() : "*";
}

// Writes the counterexample case where `headroom replay` can read it; returns the path.
std::string save_case(const std::string& case_json) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::temp_directory_path(ec);
  if (ec) dir = ".";
  const fs::path p = dir / ("headroom-" + test_name() + "-" + std::to_string(current().seed) + ".json");
  std::ofstream(p) << nlohmann::json::parse(case_json).dump(2) << "\n";
  return p.string();
}

}  // namespace

profile& current() {
  static profile p{kind_from_env(), seed_from_env(), "properties", {}};
  return p;
}

void init_profile(int argc, char** argv) {
  current().argv0 = argc > 0 ? argv[0] : "properties";
  for (int i = 1; i < argc; ++i) current().args.push_back(argv[i]);
  // RapidCheck reads RC_PARAMS once and prints it; make it show the suite's seed.
  const std::string rc_params = "seed=" + std::to_string(current().seed);
  ::setenv("RC_PARAMS", rc_params.c_str(), 0);
  std::cout << "headroom properties: profile " << (current().kind == profile_kind::ci ? "ci" : "campaign")
            << ", seed " << current().seed << " (repeat with HEADROOM_SEED=" << current().seed << ")"
            << std::endl;
}

rc::detail::TestParams params(const budget& b) {
  rc::detail::TestParams p;
  p.seed = current().seed;
  p.maxSuccess = current().kind == profile_kind::ci ? b.ci : (b.campaign ? b.campaign : 25 * b.ci);
  p.maxSize = b.max_size;
  p.maxDiscardRatio = 10;
  return p;
}

bool is_failure(const rc::detail::TestResult& r) { return r.is<rc::detail::FailureResult>(); }

std::string counterexample_case_json(const rc::detail::TestResult& r) {
  if (!r.is<rc::detail::FailureResult>()) return "";
  for (const auto& [type, value] : r.get<rc::detail::FailureResult>().counterExample) {
    auto j = nlohmann::json::parse(value, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("headroom_case")) return value;
  }
  return "";
}

std::string failure_text(const rc::detail::TestResult& r) {
  std::ostringstream os;
  rc::detail::printResultMessage(r, os);
  const std::string json = counterexample_case_json(r);
  if (!json.empty()) {
    const std::string path = save_case(json);
    os << "\nshrunk case written to " << path << "\n  replay: headroom replay " << path << " --target sim";
  }
  os << "\nrepro: HEADROOM_SEED=" << current().seed
     << " HEADROOM_PROFILE=" << (current().kind == profile_kind::ci ? "ci" : "campaign") << " "
     << current().argv0 << " --gtest_filter=" << test_name() << "\n";
  return os.str();
}

void print_success(const rc::detail::TestResult& r) {
  const auto& s = r.get<rc::detail::SuccessResult>();
  std::cout << test_name() << ": OK, passed " << s.numSuccess << " tests (seed " << current().seed << ")\n";
  for (const auto& [tags, count] : s.distribution) {
    std::string label;
    for (const auto& t : tags) label += (label.empty() ? "" : ", ") + t;
    std::cout << "  " << (100 * count / std::max(1, s.numSuccess)) << "% " << label << "\n";
  }
}

}  // namespace headroom::props
