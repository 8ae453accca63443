// The MPI campaign's messages (cli/fuzz_wire.hpp): what a rank sends arrives whole (a shrunk
// counterexample that rank 0 writes byte for byte like one process would), and a malformed
// message is an input_error naming the sending rank and the field, never a crash.
#include <gtest/gtest.h>

#include "cli/fuzz_wire.hpp"
#include "core/util/error.hpp"
#include "generators/case_gen.hpp"

namespace {

using namespace headroom;
using namespace headroom::cli;

// A failing case of C1's mutant, shrunk on the formulas (cheap).
shard_outcome failing_outcome() {
  generators::case_profile p;
  p.policies = {policy::model_wide};
  model_executor model;
  for (uint64_t i = 0;; ++i) {
    const check_case c = generators::sample_case(p, 14, i);
    const report r = generators::run_guarded(c, model);
    if (r.ok) continue;
    return {i, true, generators::signature(c, r), generators::shrink_failure(c, r, model, 200)};
  }
}

TEST(FuzzWire, OutcomeArrivesWhole) {
  const shard_outcome o = failing_outcome();
  const shard_outcome got = decode_outcome(encode_outcome(o), "rank 1");
  EXPECT_EQ(got.index, o.index);
  EXPECT_TRUE(got.failing);
  EXPECT_EQ(got.raw_signature, o.raw_signature);
  ASSERT_TRUE(got.shrunk);
  EXPECT_TRUE(got.shrunk->shrunk == o.shrunk->shrunk);
  EXPECT_EQ(got.shrunk->kind, o.shrunk->kind);
  EXPECT_EQ(got.shrunk->signature, o.shrunk->signature);
  EXPECT_EQ(got.shrunk->shrink_steps, o.shrunk->shrink_steps);
  EXPECT_EQ(got.shrunk->shrink_evals, o.shrunk->shrink_evals);
  shard_outcome unshrunk = o;  // a kind its rank knew was taken: no counterexample travels
  unshrunk.shrunk.reset();
  EXPECT_FALSE(decode_outcome(encode_outcome(unshrunk), "rank 1").shrunk);
}

TEST(FuzzWire, CountsArriveWhole) {
  shard_counts c;
  c.next = (uint64_t{1} << 40) + 3;
  c.ended = true;
  c.cases = 1234;
  c.failing = 56;
  c.started = 1240;
  c.case_time = {1234, 2.5};
  c.shrink_time = {789, 0.125};
  const shard_counts got = decode_counts(encode_counts(c), "rank 3");
  EXPECT_EQ(got.next, c.next);
  EXPECT_TRUE(got.ended);
  EXPECT_EQ(got.cases, c.cases);
  EXPECT_EQ(got.failing, c.failing);
  EXPECT_EQ(got.started, c.started);
  EXPECT_EQ(got.case_time.runs, 1234);
  EXPECT_DOUBLE_EQ(got.case_time.seconds, 2.5);
  EXPECT_EQ(got.shrink_time.runs, 789);
  EXPECT_DOUBLE_EQ(got.shrink_time.seconds, 0.125);
}

void expect_error(const std::string& text, const std::string& field) {
  try {
    decode_outcome(text, "rank 2");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const input_error& e) {
    EXPECT_EQ(e.file(), "rank 2") << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

TEST(FuzzWire, MalformedMessagesNameTheRankAndField) {
  expect_error("{\"index\": -1, \"raw\": \"x\"}", "index");
  expect_error("{\"index\": 3}", "raw");
  expect_error("{\"index\": 3, \"raw\": \"x\", \"shrunk\": 7}", "shrunk");
  std::string text = encode_outcome(failing_outcome());
  text.replace(text.find("\"invariant\":\"") + 13, 0, "no_such_");
  expect_error(text, "shrunk.invariant");
  EXPECT_THROW(decode_outcome("{\"index\": 1,", "rank 2"), input_error);
  EXPECT_THROW(decode_counts("{\"next\": 1}", "rank 2"), input_error);
}

}  // namespace
