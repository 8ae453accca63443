// The MPI campaign's messages (fuzz_wire.hpp).
#include "cli/fuzz_wire.hpp"

#include <cmath>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/util/json_file.hpp"
#include "core/util/json_read.hpp"

namespace headroom::cli {

namespace {

namespace jr = headroom::json_read;
using nlohmann::json;

constexpr int64_t int_max = INT64_MAX;
constexpr double us_per_s = 1e6;  // busy times travel as whole microseconds

int64_t to_us(double s) { return static_cast<int64_t>(std::llround(s * us_per_s)); }

uint64_t get_index(const json& j, const std::string& key, const std::string& from) {
  return static_cast<uint64_t>(jr::get_int(j, key, from, "", 0, int_max));
}

oracle_time get_time(const json& j, const std::string& key, const std::string& from) {
  const json& t = jr::get_object(j, key, from, "");
  return {jr::get_int(t, "runs", from, key + ".", 0, int_max),
          static_cast<double>(jr::get_int(t, "us", from, key + ".", 0, int_max)) / us_per_s};
}

json time_json(const oracle_time& t) { return {{"runs", t.runs}, {"us", to_us(t.seconds)}}; }

}  // namespace

std::string encode_outcome(const shard_outcome& o) {
  json j = {{"index", o.index}, {"failing", o.failing}, {"raw", o.raw_signature}};
  if (o.shrunk) {
    const auto& f = *o.shrunk;
    j["shrunk"] = {{"case", to_json(f.shrunk)}, {"invariant", to_string(f.kind.inv)},
                   {"buffer", f.kind.buffer},   {"signature", f.signature},
                   {"steps", f.shrink_steps},   {"evals", f.shrink_evals}};
  }
  return j.dump();
}

shard_outcome decode_outcome(const std::string& text, const std::string& from) {
  const json j = parse_json_text(text, from);
  shard_outcome o;
  o.index = get_index(j, "index", from);
  o.failing = jr::get_bool_or(j, "failing", false, from, "");
  o.raw_signature = jr::get_string(j, "raw", from, "");
  if (!j.contains("shrunk")) return o;
  const json& s = jr::get_object(j, "shrunk", from, "");
  generators::counterexample f;
  f.shrunk = case_from_json(jr::get_object(s, "case", from, "shrunk."), from, nullptr, "shrunk.case.");
  f.original = f.shrunk;
  const std::string inv = jr::get_string(s, "invariant", from, "shrunk.");
  const auto parsed = parse_invariant(inv);
  if (!parsed) throw input_error(from, "shrunk.invariant", "\"" + inv + "\"", "unknown invariant");
  f.kind = {*parsed, jr::get_string(s, "buffer", from, "shrunk.")};
  f.signature = jr::get_string(s, "signature", from, "shrunk.");
  f.shrink_steps = static_cast<int>(jr::get_int(s, "steps", from, "shrunk.", 0, INT32_MAX));
  f.shrink_evals = static_cast<int>(jr::get_int(s, "evals", from, "shrunk.", 0, INT32_MAX));
  o.shrunk = std::move(f);
  return o;
}

std::string encode_counts(const shard_counts& c) {
  return json{{"next", c.next},
              {"ended", c.ended},
              {"cases", c.cases},
              {"failing", c.failing},
              {"started", c.started},
              {"case_time", time_json(c.case_time)},
              {"shrink_time", time_json(c.shrink_time)},
              {"confirm_time", time_json(c.confirm_time)},
              {"unconfirmed", c.unconfirmed}}
      .dump();
}

shard_counts decode_counts(const std::string& text, const std::string& from) {
  const json j = parse_json_text(text, from);
  shard_counts c;
  c.next = get_index(j, "next", from);
  c.ended = jr::get_bool_or(j, "ended", false, from, "");
  c.cases = jr::get_int(j, "cases", from, "", 0, int_max);
  c.failing = jr::get_int(j, "failing", from, "", 0, int_max);
  c.started = jr::get_int(j, "started", from, "", 0, int_max);
  c.case_time = get_time(j, "case_time", from);
  c.shrink_time = get_time(j, "shrink_time", from);
  if (j.contains("confirm_time")) c.confirm_time = get_time(j, "confirm_time", from);
  if (j.contains("unconfirmed")) c.unconfirmed = jr::get_int(j, "unconfirmed", from, "", 0, int_max);
  return c;
}

}  // namespace headroom::cli
