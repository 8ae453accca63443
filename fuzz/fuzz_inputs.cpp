// The properties of fuzz_inputs.hpp.
#include "fuzz/fuzz_inputs.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/check/case.hpp"
#include "core/check/executor.hpp"
#include "core/check/plan_file.hpp"
#include "core/model/loader.hpp"
#include "core/util/error.hpp"
#include "core/util/json_file.hpp"

namespace headroom::fuzz {
namespace {

const std::string file = "fuzz-input.json";
constexpr int64_t plan_decode_batches = 4;

[[noreturn]] void broken(const char* property, const std::string& detail) {
  std::fprintf(stderr, "fuzz property broken: %s: %s\n", property, detail.c_str());
  std::abort();
}

// One line, nothing a terminal acts on, bounded: four parts of at most ~220 bytes each.
void check_message(const input_error& e) {
  const std::string what = e.what();
  for (unsigned char c : what)
    if (c < 0x20 || c == 0x7f) broken("message is one printable line", what);
  if (what.size() > 1024) broken("message is bounded", what.substr(0, 300));
}

template <class Parse>
void accepted_or_refused(std::string_view bytes, Parse&& parse) {
  try {
    parse(parse_json_text(bytes, file));
  } catch (const input_error& e) {
    check_message(e);
  }
}

}  // namespace

void config_input(std::string_view bytes) {
  accepted_or_refused(bytes, [](const nlohmann::json& j) {
    const model_geometry m = parse_model(j, file);
    if (!(parse_model(to_json(m), file) == m)) broken("config round trip", to_json(m).dump());
    for (int64_t tp : {1, 2, 4, 8}) {
      try {
        to_rank(m, tp);
      } catch (const input_error& e) {
        check_message(e);
      }
    }
  });
}

void case_input(std::string_view bytes) {
  accepted_or_refused(bytes, [](const nlohmann::json& j) {
    const check_case c = case_from_json(j, file);
    if (!(case_from_json(to_json(c), file) == c)) broken("case round trip", to_json(c).dump());
  });
}

void plan_input(std::string_view bytes) {
  accepted_or_refused(bytes, [](const nlohmann::json& j) {
    plan_file p = plan_from_json(j, file);
    const nlohmann::json once = to_json(p);
    if (to_json(plan_from_json(once, file)) != once) broken("plan round trip", once.dump());
    // verify's decode sweep is 1..max_num_seqs batches of one shape: a few of them take every path
    // of case building, planning and judging, and keep an execution under a second (the whole
    // sweep of 256 takes about 1 s under the sanitizers, of 4096 about 20 s).
    p.engine.max_num_seqs = std::min<int64_t>(p.engine.max_num_seqs, plan_decode_batches);
    model_executor ex;
    run_verify(p, ex);  // its input_error (a target's limit on a layer) is a refusal like the reader's
  });
}

}  // namespace headroom::fuzz
