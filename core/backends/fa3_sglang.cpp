// SGLang's FA3 decode schedule (fa3_sglang.hpp): which forwards precompute it, with which
// geometry and lengths, and what each layer's mha_fwd recomputes.
#include "core/backends/fa3_sglang.hpp"

#include <algorithm>

#include "core/util/checked.hpp"
#include "core/util/names.hpp"

namespace headroom {
namespace {

int64_t round_up_to(int64_t x, int64_t m) { return checked_mul(ceil_div(x, m), m, "fa3 sglang rounding"); }

// The longest sequence the schedule is told (max_seqlen_k) and the page table's width in tokens
// the run derives its own from (max_num_pages_per_seq * page_size).
struct pass_lengths {
  int64_t sched = 1, run = 1;
};

pass_lengths lengths_of(const engine_settings& s, const engine_step& st, sglang_fa3_pass pass, int64_t page) {
  if (pass == sglang_fa3_pass::eager) {
    int64_t longest = 1;
    for (int64_t len : st.b.seq_lens) longest = std::max(longest, len);
    return {longest, round_up_to(longest, page)};
  }
  const int64_t table = round_up_to(s.max_model_len, page);  // max_num_pages of max_context_len
  return {pass == sglang_fa3_pass::capture ? 1 : s.max_model_len, table};
}

constexpr name_table<sglang_fa3_pass, 4> pass_names = {{{sglang_fa3_pass::none, "no precompute"},
                                                        {sglang_fa3_pass::eager, "eager decode"},
                                                        {sglang_fa3_pass::replay, "decode graph replay"},
                                                        {sglang_fa3_pass::capture, "decode graph capture"}}};

}  // namespace

const char* to_string(sglang_fa3_pass p) { return name_in(pass_names, p, "no precompute"); }

sglang_fa3_pass sglang_fa3_pass_of(const engine_settings& s, const engine_step& st) {
  if (s.flavour != engine_flavour::sglang) return sglang_fa3_pass::none;
  const bool dp_attention = s.attn_tp_size > 1 || s.gathered_buffer;
  if (dp_attention || s.attn_cp_size > 1 || s.two_batch_overlap || s.num_speculative_tokens > 0)
    return sglang_fa3_pass::none;
  if (st.spec.kind == step_kind::dummy)
    return st.spec.uniform && st.graph_size > 0 ? sglang_fa3_pass::capture : sglang_fa3_pass::none;
  if (st.spec.kind != step_kind::forward || !st.uniform_decode) return sglang_fa3_pass::none;
  return st.graph_size > 0 ? sglang_fa3_pass::replay : sglang_fa3_pass::eager;
}

fa3_plan plan_fa3_sglang(const engine_settings& s, const engine_step& st, sglang_fa3_pass pass,
                         const fa3_group& g) {
  fa3_plan p;
  const bool graph = pass != sglang_fa3_pass::eager;
  // Rows: the batch's requests, or the graph's batch size (one token per request, k = 0).
  const int64_t b = graph ? st.graph_size : static_cast<int64_t>(st.b.seq_lens.size());
  for (int64_t i = 0; i <= b; ++i) p.query_start.push_back(static_cast<int32_t>(i));
  if (pass != sglang_fa3_pass::capture)
    for (int64_t len : st.b.seq_lens) p.seq_lens.push_back(static_cast<int32_t>(len));
  p.seq_lens.resize(static_cast<std::size_t>(b), 1);  // the graph's fill value
  const pass_lengths len = lengths_of(s, st, pass, g.page_size);
  fa3_call c{g.q_heads, g.kv_heads, g.head_size, g.page_size, 0, 1, len.sched, fa3_build::upstream, g.e4m3};
  // 0 as SGLang passes no headdim_v (get_scheduler_metadata then takes headdim); a value: a call with one
  c.head_size_v = g.head_size_v;
  p.sched_call = c;
  fa3_call r = c;  // mha_fwd: heads from q, kv heads and head size from the cache, seqlen_k from the table
  if (g.run_q_heads > 0) r.q_heads = g.run_q_heads;
  if (g.run_kv_heads > 0) r.kv_heads = g.run_kv_heads;
  if (g.run_head_size > 0) r.head_size = g.run_head_size;
  if (g.run_head_size_v > 0) r.head_size_v = g.run_head_size_v;  // dv from the v cache
  r.max_seq_len = len.run;
  p.run_call = r;
  // num_splits 0 on both sides (1 only under enable_deterministic_inference, not mirrored).
  p.sched_resolved = fa3_heuristic_splits(c);
  p.run_resolved = fa3_heuristic_splits(r);
  p.sched = fa3_upstream_layout_of(b, false, fa3_head_swizzle(1, c.max_seq_len, c.head_size, 0));
  p.run_size = fa3_upstream_layout_of(b, false, fa3_head_swizzle(1, r.max_seq_len, r.head_size, 0)).size();
  p.sched_dynamic_max = fa3_dynamic_splits_max(c, p.query_start, p.seq_lens, p.sched_resolved);
  const int64_t max_bs = max_capture_of(s);  // k = 0: the largest graph's requests
  const int64_t rows = graph ? max_bs : b;
  const int64_t entries = graph ? checked_add(checked_mul(round_up_to(max_bs, 4), 4), 1) : p.sched.size();
  p.buffers = {{"scheduler_metadata", checked_mul(entries, 4), 4},
               {"query_start_loc", checked_mul(rows + 1, 4), 4},
               {"seq_lens", checked_mul(rows, 4), 4}};
  return p;
}

}  // namespace headroom
