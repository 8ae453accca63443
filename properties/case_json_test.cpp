// Property: a case survives JSON losslessly (docs/design.md: a counterexample file is a case): to_json,
// text, parse, case_from_json gives the same case, and the same JSON again. Extra keys (a corpus
// file's "expect", "note") are ignored. A lossy serialiser is caught (the property is not vacuous).
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "generators/case_gen.hpp"
#include "generators/corpus.hpp"
#include "properties/support/prop_check.hpp"
#include "properties/support/profiles.hpp"
#include "tests/support/laguna.hpp"

namespace headroom {
namespace {

using serialiser = std::function<nlohmann::json(const check_case&)>;

void round_trips(const check_case& c, const serialiser& to) {
  const nlohmann::json j = to(c);
  const check_case back = case_from_json(nlohmann::json::parse(j.dump()), "roundtrip.json");
  if (!(back == c)) RC_FAIL("case changed across JSON: " + j.dump());
  RC_ASSERT(to_json(back) == to_json(c));
  generators::corpus_entry e{c, {{"model", {"buffer_capacity"}}}, 2.0, "a note"};
  nlohmann::json with_extras = generators::to_corpus_json(e);
  with_extras["unknown_key"] = {1, 2, 3};
  RC_ASSERT(case_from_json(with_extras, "extras.json") == c);
  RC_ASSERT(generators::corpus_from_json(with_extras, "extras.json").expect == e.expect);
  RC_TAG(to_string(c.pol), to_string(c.grp), to_string(c.model.kv_dtype));
}

const props::budget budget{1000, 0, 100};

rc::Gen<check_case> any_case() {
  return rc::gen::weightedOneOf<check_case>(
      {{4, generators::raw_cases(props::everything())},
       {1, generators::large_cases({policy::per_layer, policy::model_wide, policy::max})}});
}

TEST(CaseJson, RoundTripsLosslessly) {
  props::check([] { round_trips(*any_case(), [](const check_case& c) { return to_json(c); }); }, budget);
}

TEST(CaseJson, DetectsALossySerialiser) {
  const auto r = props::run(
      [] {
        round_trips(*any_case(), [](const check_case& c) {
          nlohmann::json j = to_json(c);
          j.erase("hybrid");  // forgets the hybrid manager: cases with it off come back on
          return j;
        });
      },
      budget);
  ASSERT_TRUE(props::is_failure(r)) << "a serialiser dropping 'hybrid' went unnoticed";
}

TEST(CaseJson, CorpusErrorsDescribeDeepValues) {
  // A 200k-deep "expect" used to be dump()ed into the message, recursing past the stack.
  check_case c;
  c.model = testing::laguna_xs2();
  c.b = batch{{300}, {1}};
  nlohmann::json j = to_json(c);
  j["expect"] = nlohmann::json::parse(std::string(200000, '[') + std::string(200000, ']'));
  try {
    generators::corpus_from_json(j, "deep.json");
    FAIL() << "a list for 'expect' was accepted";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("'expect' = an array of 1 element:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace headroom
