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
  c.head_size_v = g.head_size_v;
  for (int64_t len : st.b.seq_lens) c.max_seq_len = std::max(c.max_seq_len, len);  // max_seqlen_k
  p.sched_call = c;
  const bool swizzle = fa3_head_swizzle(c.max_query_len, c.max_seq_len, g.head_size, g.window);
  p.sched_resolved = resolved_splits(p.sched_splits, fa3_heuristic_splits(c));
  p.sched = fa3_layout_of(b, p.sched_resolved, swizzle);
  // The run's split heuristic and mask see the layer's tensors (mha_fwd: h from q, h_k and d from k,
  // dv from v).
  const fa3_call r = fa3_layer_call(c, g.run_q_heads > 0 ? g.run_q_heads : c.q_heads,
                                    g.run_kv_heads > 0 ? g.run_kv_heads : c.kv_heads,
                                    g.run_head_size > 0 ? g.run_head_size : c.head_size, c.window,
                                    g.run_head_size_v > 0 ? g.run_head_size_v : c.head_size_v);
  p.run_call = r;
  const fa3_run run = fa3_run_of(p, r);
  p.run_resolved = run.resolved, p.run_size = run.size;
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

fa3_plan plan_fa3_in_call(const engine_settings& s, const engine_step& st, const fa3_group& g) {
  fa3_group own = g;
  // One call: the schedule is the run's.
  own.run_q_heads = own.run_kv_heads = own.run_head_size = own.run_head_size_v = 0;
  fa3_plan p = plan_fa3(s, st, own, {});
  p.in_call = true;
  p.buffers.front().capacity_bytes = 4 * p.sched.size();  // mha_fwd's new_empty({metadata_size})
  return p;
}

fa3_run fa3_run_of(const fa3_plan& p, const fa3_call& r) {
  const bool swizzle = fa3_head_swizzle(r.max_query_len, r.max_seq_len, r.head_size, r.window);
  fa3_run run;
  run.resolved = resolved_splits(p.run_splits, fa3_heuristic_splits(r));
  run.size = fa3_layout_of(p.sched.batch, run.resolved, swizzle).size();
  return run;
}

int64_t fa3_run_splits(const fa3_plan& p, const fa3_call& r) {
  return p.sched.batch > fa3_varlen_max_batches ? 1 : fa3_run_of(p, r).resolved;
}

std::string fa3_mha_fwd_refusal(int64_t q_heads, int64_t kv_heads, int64_t head_size, bool e4m3,
                                int64_t head_size_v) {
  const int64_t alignment = e4m3 ? 16 : 8;
  if (head_size <= 0 || head_size > 256 || head_size % alignment != 0)
    return "head size " + std::to_string(head_size) + ": at most 256, a multiple of " +
           std::to_string(alignment);
  const int64_t dv = head_size_v > 0 ? head_size_v : head_size;
  if (dv != head_size) {
    const bool pair = (head_size > 128 && head_size <= 192 && dv > 96 && dv <= 128) ||
                      (head_size <= 64 && dv <= 512 && !(e4m3 && dv > 256));
    if (!pair || dv % alignment != 0)
      return "head size " + std::to_string(head_size) + " with head size v " + std::to_string(dv) +
             ": v apart from the head size only in (96, 128] beside (128, 192], or up to 512 beside "
             "at most 64, a multiple of " +
             std::to_string(alignment);
  }
  if (kv_heads <= 0 || q_heads % kv_heads != 0)
    return std::to_string(q_heads) + " query heads over " + std::to_string(kv_heads) + " kv heads";
  return {};
}

fa3_call fa3_layer_call(const fa3_call& sched, int64_t q_heads, int64_t kv_heads, int64_t head_size,
                        int64_t window, int64_t head_size_v) {
  fa3_call c = sched;
  c.q_heads = q_heads, c.kv_heads = kv_heads, c.head_size = head_size, c.window = window;
  c.head_size_v = head_size_v;
  return c;
}

int64_t fa3_rows_never_computed(const fa3_plan& p, const fa3_call& run) {
  const auto group = [](const fa3_call& c) { return c.kv_heads > 0 ? c.q_heads / c.kv_heads : 0; };
  const int64_t sched_group = std::max<int64_t>(group(p.sched_call), 1), run_group = group(run);
  if (run_group <= 0) return 0;
  const int64_t block_m = fa3_call_tile(run).m;
  const int64_t prepared_m =
      p.sched_call.build == fa3_build::upstream ? fa3_call_tile(p.sched_call).m : block_m;
  int64_t rows = 0;
  for (std::size_t i = 0; i + 1 < p.query_start.size(); ++i) {
    const int64_t q = p.query_start[i + 1] - p.query_start[i];
    const int64_t m_blocks = ceil_div(checked_mul(q, sched_group, "fa3 packed rows"), prepared_m);
    const int64_t covered = checked_mul(m_blocks, block_m, "fa3 packed rows");
    const int64_t packed = checked_mul(q, run_group, "fa3 packed rows");
    if (packed > covered) rows = checked_add(rows, checked_mul(packed - covered, run.kv_heads, "fa3 rows"));
  }
  return rows;
}

int64_t fa3_rows_never_combined(const fa3_plan& p, const fa3_call& run) {
  if (p.sched_call.build != fa3_build::vllm_fork || run.kv_heads <= 0) return 0;
  const int64_t b = p.sched.batch;
  if (fa3_run_splits(p, run) <= 1 || static_cast<int64_t>(p.query_start.size()) != b + 1) return 0;
  const int64_t m = fa3_head_size_v(run) <= 64 ? 16 : 8;  // the combine's kBlockM for kBlockK 64 / 128
  const int64_t total_q = p.query_start.back(), max_q = std::max<int64_t>(run.max_query_len, 1);
  if (2 * ceil_div(total_q, m) >= checked_mul(b, ceil_div(max_q, m), "fa3 combine grid")) return 0;
  const int64_t sched_group = fa3_group_size(p.sched_call);
  const std::vector<int64_t> given =
      fa3_dynamic_splits(p.sched_call, p.query_start, p.seq_lens, p.sched_resolved);
  const int64_t tiles =
      checked_add(ceil_div(checked_mul(total_q, run.q_heads, "fa3 combine rows"), m), b, "fa3 tiles");
  int64_t first_tile = 0, lost = 0;
  for (int64_t i = 0; i < b; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const int64_t q = p.query_start[u + 1] - p.query_start[u];
    const int64_t prepared =
        checked_mul(checked_mul(q, sched_group, "fa3 packed rows"), run.kv_heads, "fa3 rows");
    const int64_t blocks = ceil_div(prepared, m);
    const int64_t launched = std::clamp<int64_t>(tiles - first_tile, 0, blocks);
    first_tile = checked_add(first_tile, blocks, "fa3 tiles");
    const int64_t rows = checked_mul(q, run.q_heads, "fa3 rows");
    if (given[u] > 1) lost = checked_add(lost, std::max<int64_t>(0, rows - launched * m), "fa3 rows");
  }
  return lost;
}

std::vector<buffer_need> fa3_needs(const fa3_plan& p) {
  return {{"scheduler_metadata", 4, p.sched.size()},
          {"query_start_loc", 4, p.sched.batch + 1},
          {"seq_lens", 4, p.sched.batch}};
}

}  // namespace headroom
