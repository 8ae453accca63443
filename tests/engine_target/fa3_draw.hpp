// Random FA3 scheduler calls for the comparisons of headroom's mirror with FA3's own host rules
// (fa3_schedule_test.cpp: vLLM's fork; fa3_upstream_schedule_test.cpp: Dao-AILab's, as SGLang
// calls it), the call FA3 receives, and the per-field tally of differences.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "core/backends/fa3.hpp"
#include "targets/engine/fa3/schedule_call.hpp"
#include "tests/support/fa3_answer.hpp"

namespace headroom {

struct drawn_call {
  fa3_call c;
  int64_t batch = 1, num_splits = 0;
  std::string text() const {
    std::ostringstream o;
    o << "batch " << batch << ", " << c.q_heads << " / " << c.kv_heads << " heads, D " << c.head_size;
    if (c.head_size_v > 0) o << ", Dv " << c.head_size_v;
    o << ", page " << c.page_size << ", window " << c.window << ", max_seqlen_q " << c.max_query_len
      << ", max_seqlen_k " << c.max_seq_len << ", num_splits " << num_splits << (c.e4m3 ? ", e4m3" : "");
    return o.str();
  }
};

// `sglang`: SGLang's decode schedule (one query row, no window, the heuristic's split count).
inline drawn_call draw(std::mt19937_64& rng, bool sglang) {
  const auto pick = [&](std::initializer_list<int64_t> xs) {
    return *(xs.begin() + std::uniform_int_distribution<std::size_t>(0, xs.size() - 1)(rng));
  };
  const auto upto = [&](int64_t hi) { return std::uniform_int_distribution<int64_t>(1, hi)(rng); };
  const auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  drawn_call d;
  fa3_call& c = d.c;
  c.kv_heads = pick({1, 2, 4, 8, 16, 32});
  c.q_heads = c.kv_heads * pick({1, 2, 3, 4, 5, 6, 7, 8, 16});
  c.head_size = pick({32, 64, 80, 96, 128, 160, 192, 256});
  c.page_size = pick({16, 32, 64, 128, 256});
  c.window = !sglang && chance(0.3) ? upto(8192) : 0;
  c.max_query_len = sglang || chance(0.5) ? 1 : upto(chance(0.5) ? 64 : 8192);
  c.max_seq_len = c.max_query_len + upto(chance(0.5) ? 4096 : 1 << 20) - 1;
  c.e4m3 = chance(0.2);
  d.batch = chance(0.1) ? upto(4000) : upto(256);
  d.num_splits = !sglang && chance(0.4) ? fa3_graph_max_splits : 0;
  if (sglang) c.build = fa3_build::upstream;
  // A head size v apart from the head size where mha_fwd takes one (MiMo-V2's 192 / 128; MLA's
  // value sizes beside a small head size), the rest 0 (= the head size).
  if (c.head_size > 128 && c.head_size <= 192 && chance(0.3)) c.head_size_v = pick({104, 112, 120, 128});
  if (c.head_size <= 64 && chance(0.3)) c.head_size_v = pick({128, 256, 512});
  return d;
}

// The call FA3 receives for a drawn call: causal, the window as (window - 1, 0).
inline engine::fa3::schedule_call call_of(const drawn_call& d) {
  const fa3_call& c = d.c;
  engine::fa3::schedule_call call;
  call.batch = static_cast<int>(d.batch);
  call.max_seqlen_q = static_cast<int>(c.max_query_len), call.max_seqlen_k = static_cast<int>(c.max_seq_len);
  call.num_heads = static_cast<int>(c.q_heads), call.num_heads_k = static_cast<int>(c.kv_heads);
  call.headdim = static_cast<int>(c.head_size), call.page_size = static_cast<int>(c.page_size);
  call.headdim_v = static_cast<int>(c.head_size_v);
  call.e4m3 = c.e4m3;
  call.window_left = c.window > 0 ? static_cast<int>(c.window - 1) : -1;
  call.window_right = c.window > 0 ? 0 : -1;
  call.num_splits = static_cast<int>(d.num_splits);
  return call;
}

// Per field: how many calls differ, and the first of them.
struct field_diffs {
  std::map<std::string, int> count;
  std::map<std::string, std::string> first;
  void note(const char* field, int64_t mirror, int64_t fa3, const drawn_call& d) {
    if (mirror == fa3) return;
    if (count[field]++ == 0)
      first[field] = d.text() + ": mirror " + std::to_string(mirror) + ", FA3 " + std::to_string(fa3);
  }
  void report(int calls) const {
    for (const auto& [field, n] : count)
      ADD_FAILURE() << field << " differs in " << n << " of " << calls
                    << " calls; first: " << first.at(field);
    std::printf("%d random calls, %zu fields that differ\n", calls, count.size());
  }
};

// Notes every field of the golden table where the mirror's answer and FA3's differ.
inline void note_answers(field_diffs& diffs, const fa3_answer& mirror, const fa3_answer& fa3,
                         const drawn_call& d) {
  const auto m = fa3_fields(mirror), f = fa3_fields(fa3);
  for (std::size_t i = 0; i < m.size(); ++i) diffs.note(m[i].first, m[i].second, f[i].second, d);
}

}  // namespace headroom
