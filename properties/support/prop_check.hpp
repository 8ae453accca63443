// Running RapidCheck properties under headroom's budgets. The profile comes from HEADROOM_PROFILE
// (ci, the default, or campaign); the seed from HEADROOM_SEED (else the clock) and is printed once
// per binary. A failing property fails its gtest with the shrunk counterexample, the case written
// to a file with a `headroom replay` line, and a one-line repro of the test itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

namespace headroom::props {

enum class profile_kind { ci, campaign };

struct profile {
  profile_kind kind = profile_kind::ci;
  uint64_t seed = 0;
  std::string argv0;
  std::vector<std::string> args;  // arguments gtest did not consume
};

// Read once from the environment (prop_main.cpp prints it and records argv[0]).
profile& current();
void init_profile(int argc, char** argv);

// Cases per property: the ci budget keeps the cpu lane short; campaign runs 25x more by default.
struct budget {
  int ci = 100;
  int campaign = 0;  // 0: 25 x ci
  int max_size = 100;
};

rc::detail::TestParams params(const budget& b);

// Listens to nothing: failures are reported by check() with our own repro line, and tests that
// expect a failure must not leave RapidCheck's "had failures" note behind.
class quiet_listener final : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

// Runs a property and returns RapidCheck's result (tests that expect a failure inspect it).
template <class F>
rc::detail::TestResult run(F&& prop, const budget& b) {
  rc::detail::TestMetadata md;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info) md.id = md.description = std::string(info->test_suite_name()) + "." + info->name();
  quiet_listener quiet;
  return rc::detail::checkProperty(rc::detail::toProperty(std::forward<F>(prop)), md, params(b), quiet);
}

// gtest failure text for a failed result: description, counterexample, replay file, repro line.
std::string failure_text(const rc::detail::TestResult& r);
// The counterexample's first case (a shown check_case is its JSON); empty when there is none.
std::string counterexample_case_json(const rc::detail::TestResult& r);
// Prints the distribution of RC_CLASSIFY / RC_TAG labels of a successful run.
void print_success(const rc::detail::TestResult& r);

// Runs a property that must hold.
template <class F>
void check(F&& prop, const budget& b) {
  const auto r = run(std::forward<F>(prop), b);
  if (r.template is<rc::detail::SuccessResult>())
    print_success(r);
  else
    ADD_FAILURE() << failure_text(r);
}

bool is_failure(const rc::detail::TestResult& r);

}  // namespace headroom::props
