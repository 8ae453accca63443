// FA3 scheduler metadata sizing (fa3.hpp): vLLM's FlashAttentionMetadataBuilder (buffer and
// max_num_splits per build) and flash-attention's hopper/flash_api.cpp (layout and run-time check).
#include "core/backends/fa3.hpp"

#include <algorithm>

#include "core/util/checked.hpp"

namespace headroom {
namespace {

int64_t resolved_splits(int64_t splits, int64_t heuristic) { return splits > 0 ? splits : heuristic; }

int64_t round_up4(int64_t x) { return ceil_div(x, 4) * 4; }

}  // namespace

fa3_layout fa3_layout_of(int64_t batch, int64_t num_splits, bool head_swizzle) {
  fa3_layout l;
  l.batch = batch;
  l.rounded = round_up4(batch);
  l.dynamic_split = batch <= fa3_varlen_max_batches && num_splits > 1;
  l.head_swizzle = head_swizzle;
  l.nvec = 1 + (l.dynamic_split ? 1 : 0) + (head_swizzle ? 1 : 0);  // sorting is never on
  return l;
}

fa3_layout fa3_upstream_layout_of(int64_t batch, bool local, bool head_swizzle) {
  fa3_layout l;
  l.batch = batch;
  l.rounded = round_up4(batch);
  l.dynamic_split = true;  // written for every batch: 1 where the step does not split
  l.head_swizzle = head_swizzle;
  l.nvec = 2 + (local ? 0 : 1) + (head_swizzle ? 1 : 0);
  return l;
}

int64_t fa3_metadata_capacity(const engine_settings& s, const fa3_mutants& m) {
  if (!has_full_graphs(s.cg_mode)) return 0;
  const int64_t max_batch = std::max(s.max_num_seqs, max_capture_of(s));
  if (m.old_layout) return s.max_num_seqs + 1;
  if (m.no_roundup) return checked_add(checked_mul(max_batch, 4), 1);
  return checked_add(checked_mul(round_up4(max_batch), 4), 1);
}

fa3_plan plan_fa3(const engine_settings& s, const engine_step& st, const fa3_group& g, const fa3_mutants& m) {
  fa3_plan p;
  const int64_t b = st.num_reqs_padded;
  // Under FULL graphs a build of at most the largest capture size uses the graph's split count,
  // any other the heuristic (0); one value for schedule and run since vLLM #25490.
  const bool graphs = has_full_graphs(s.cg_mode);
  p.run_splits = graphs && st.num_tokens <= max_capture_of(s) ? fa3_graph_max_splits : 0;
  p.sched_splits = m.split_mismatch && graphs ? fa3_graph_max_splits : p.run_splits;
  fa3_call c{g.q_heads,   g.kv_heads,
             g.head_size, g.page_size,
             g.window,    std::max<int64_t>(st.max_query_len, 1),
             0,           fa3_build::vllm_fork,
             g.e4m3};
  for (int64_t len : st.b.seq_lens) c.max_seq_len = std::max(c.max_seq_len, len);  // max_seqlen_k
  p.sched_call = c;
  const bool swizzle = fa3_head_swizzle(c.max_query_len, c.max_seq_len, g.head_size, g.window);
  p.sched_resolved = resolved_splits(p.sched_splits, fa3_heuristic_splits(c));
  p.sched = fa3_layout_of(b, p.sched_resolved, swizzle);
  // The run's split heuristic and mask see the layer's tensors (mha_fwd: h from q, h_k and d from k).
  fa3_call r = c;
  if (g.run_q_heads > 0) r.q_heads = g.run_q_heads;
  if (g.run_kv_heads > 0) r.kv_heads = g.run_kv_heads;
  if (g.run_head_size > 0) r.head_size = g.run_head_size;
  const bool run_swizzle = fa3_head_swizzle(r.max_query_len, r.max_seq_len, r.head_size, r.window);
  p.run_resolved = resolved_splits(p.run_splits, fa3_heuristic_splits(r));
  p.run_size = fa3_layout_of(b, p.run_resolved, run_swizzle).size();
  for (int64_t q : st.query_start) p.query_start.push_back(static_cast<int32_t>(q));
  for (int64_t len : st.b.seq_lens) p.seq_lens.push_back(static_cast<int32_t>(len));
  p.seq_lens.resize(static_cast<std::size_t>(b), 0);  // padded rows
  if (p.sched.dynamic_split)
    p.sched_dynamic_max = fa3_dynamic_splits_max(c, p.query_start, p.seq_lens, p.sched_resolved);
  const int64_t cap = fa3_metadata_capacity(s, m);
  p.buffers = {{"scheduler_metadata", 4 * (cap > 0 ? cap : p.sched.size()), 4},
               {"query_start_loc", 4 * (s.max_num_seqs + 1), 4},
               {"seq_lens", 4 * s.max_num_seqs, 4}};
  return p;
}

std::vector<buffer_need> fa3_needs(const fa3_plan& p) {
  return {{"scheduler_metadata", 4, p.sched.size()},
          {"query_start_loc", 4, p.sched.batch + 1},
          {"seq_lens", 4, p.sched.batch}};
}

}  // namespace headroom
