// Property: bad input takes the error path (docs/design.md exit code 2), never a crash or another
// exception: configs with one defect (explicit and Hugging Face forms), case files with one
// defect, and TP sizes that do not divide the heads all raise input_error naming the field.
#include <optional>

#include "core/check/check.hpp"
#include "core/model/loader.hpp"
#include "core/util/error.hpp"
#include "generators/geometry_gen.hpp"
#include "generators/invalid_gen.hpp"
#include "properties/support/prop_check.hpp"

namespace headroom {
namespace {

struct outcome {
  bool accepted = false;
  std::optional<input_error> input;
  std::string other;  // another exception's type and message
};

template <class F>
outcome attempt(F&& f) {
  outcome o;
  try {
    f();
    o.accepted = true;
  } catch (const input_error& e) {
    o.input = e;
  } catch (const std::exception& e) {
    o.other = e.what();
  }
  return o;
}

void names_the_field(const outcome& o, const generators::invalid_input& bad, const char* file) {
  RC_TAG(bad.defect);
  if (o.accepted) RC_FAIL("accepted " + bad.defect + ": " + bad.json.dump());
  if (!o.other.empty()) RC_FAIL(bad.defect + " raised a non-input error: " + o.other);
  if (o.input->field() != bad.field)
    RC_FAIL(bad.defect + ": the error names '" + o.input->field() + "', expected '" + bad.field +
            "': " + o.input->what());
  RC_ASSERT(o.input->file() == std::string(file));
}

const props::budget budget{1000, 0, 100};

TEST(BadInput, ConfigsRaiseInputErrorNamingTheField) {
  props::check(
      [] {
        const auto bad = *generators::invalid_configs();
        names_the_field(attempt([&] { parse_model(bad.json, "bad.json"); }), bad, "bad.json");
      },
      budget);
}

TEST(BadInput, CaseFilesRaiseInputErrorNamingTheField) {
  props::check(
      [] {
        const auto bad = *generators::invalid_cases();
        names_the_field(attempt([&] { case_from_json(bad.json, "bad_case.json"); }), bad, "bad_case.json");
      },
      budget);
}

// The smallest prime that does not divide n (a TP size the model-wide heads reject).
int64_t non_divisor(int64_t n) {
  for (int64_t p : {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47})
    if (n % p != 0) return p;
  return 53;
}

TEST(BadInput, TpNotDividingTheHeadsIsAnInputError) {
  props::check(
      [] {
        generators::geometry_limits lim;
        auto g = *generators::geometries(lim);
        g.model.source = "model.json";
        const int64_t tp = non_divisor(g.model.num_attention_heads);
        const outcome o = attempt([&] { to_rank(g.model, tp); });
        RC_ASSERT(!o.accepted);
        RC_ASSERT(o.other.empty());
        RC_ASSERT(o.input->field() == std::string("num_attention_heads"));
        RC_ASSERT(o.input->value() == std::to_string(g.model.num_attention_heads));
      },
      budget);
}

}  // namespace
}  // namespace headroom
