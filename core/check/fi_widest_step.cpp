// The widest eager prefill steps check runs for FlashInfer groups (plans.hpp): the one with the
// most PrefillSM90Plan works (fa3) and the one with the largest PrefillPlan int workspace (fa2).
#include <algorithm>
#include <vector>

#include "core/backends/fi_prefill_sm90.hpp"
#include "core/check/plans.hpp"
#include "core/util/checked.hpp"

namespace headroom {

// PrefillSM90Plan writes one work per (head, request, query tile of T rows), and every int
// workspace part but work_indptr holds one int32 a work: eager, below the same-schedule bound, the
// parts grow with H * sum_i ceil(q_i / T). So the widest step maximises sum_i ceil(q_i / T) over at
// most max_num_seqs requests of at least 2 rows each (a 1-row request goes to the decode wrapper)
// and at most B = max_num_batched_tokens rows in all:
// - a request is a tile for 2 rows, a further tile costs T - 1 rows at best (ceil(q / T) <=
//   1 + (q - 2) / (T - 1) for q >= 2, equal at q = T + 1), so many short requests beat few long
//   ones: n = min(max_num_seqs, B / 2) requests, then the spare B - 2n rows as requests of T + 1
//   rows, floor((B - 2n) / (T - 1)) of them while that is at most n; past n every request holds
//   2 tiles and a further one costs T rows (q = kT + 1): floor((B - n) / T) further tiles.
//   (n - 1 requests of 2 rows and one of the rest has floor((B - 2n + 1) / T) further tiles:
//   never more, often fewer; with T = 128 and B - 2n = 254, 1 against 2.)
// - past 4096 works a head (ceil(B / T) + n - 1) the planner schedules one head for all: with more
//   than one head a step trimmed to that bound has more works, so n and B are trimmed to it (with
//   one head a rank the untrimmed step would have a few more).
// - a request holds at most max_model_len rows: B is at most n of them, and a request is cut to it.
batch fi_prefill_widest_step(const engine_settings& e, int64_t cta_tile_q) {
  const int64_t t = std::max<int64_t>(cta_tile_q, 2);
  const int64_t model_len = e.max_model_len;
  int64_t n = std::min(e.max_num_seqs, e.max_num_batched_tokens / 2);
  if (n < 1 || model_len < 2) return {};
  while (n > 1 && n + ceil_div(2 * n, t) - 1 > fi_sm90_same_schedule_above) --n;
  const int64_t rows = std::min({e.max_num_batched_tokens, checked_mul(n, model_len, "rows"),
                                 (fi_sm90_same_schedule_above + 1 - n) * t});
  std::vector<int64_t> q(static_cast<std::size_t>(n), 2);
  if (const int64_t more = (rows - 2 * n) / (t - 1); more <= n) {
    for (int64_t i = 0; i < more; ++i) q[static_cast<std::size_t>(i)] = t + 1;
  } else {
    const int64_t further = (rows - n) / t;
    for (int64_t i = 0; i < n; ++i)
      q[static_cast<std::size_t>(i)] = (further / n + (i < further % n)) * t + 1;
  }
  int64_t used = 0;
  for (int64_t x : q) used += x;
  q.back() += rows - used;  // fewer rows than a further tile costs: no tile lost, every row used
  batch b;
  for (int64_t x : q) {
    b.seq_lens.push_back(std::min(x, model_len));
    b.query_lens.push_back(std::min(x, model_len));
  }
  return b;
}

namespace {

// The fewest query rows (at least 2) a request needs for k FA2 tiles of t packed rows, with g
// packed rows a query row: ceil(g q / t) >= k, i.e. g q > (k - 1) t.
int64_t rows_for_tiles(int64_t k, int64_t g, int64_t t) {
  return std::max<int64_t>(2, checked_mul(k - 1, t, "fa2 tile rows") / g + 1);
}

// n requests holding `rows` query rows in all, laid out for the most tiles (see below).
struct fa2_layout {
  int64_t n = 0, rows = 0, base = 0, raised = 0, next = 0, tiles = 0, bytes = 0;
};

fa2_layout lay_out(int64_t n, int64_t rows, int64_t g, int64_t head_dim, int64_t model_len,
                   const flashinfer_options& o) {
  fa2_layout l{n, rows};
  const int64_t t =
      fi_cta_tile_q(checked_mul(g, rows, "fa2 packed rows") / n, head_dim, o.kv_dtype_bytes, o.device);
  const int64_t k = ceil_div(checked_mul(g, rows / n, "fa2 packed rows"), t);
  l.base = rows_for_tiles(k, g, t);
  l.next = rows_for_tiles(k + 1, g, t);
  if (l.next <= model_len) l.raised = std::min(n - 1, (rows - n * l.base) / (l.next - l.base));
  l.tiles = checked_add(checked_mul(n, k, "fa2 tiles"), l.raised, "fa2 tiles");
  fi_prefill_plan p;  // eager and unsplit: the parts are the tiles' three indices and o_indptr
  p.batch_size = n;
  p.padded_batch_size = l.tiles;
  l.bytes = fi_int_workspace_bytes(p);
  return l;
}

}  // namespace

// PrefillPlanImpl (scheduler.cuh at fb28d72) carves from the int workspace three int32 parts of
// padded_batch_size entries (request, qo tile and kv tile indices), o_indptr (batch_size + 1) and
// the chunk size; eager (vLLM's prefill wrapper) padded_batch_size is the work count, the sum over
// requests of ceil(g q_i / T) qo tiles times their kv chunks, and split_kv adds merge_indptr
// (total_num_rows + 1) and block_valid_mask. Unlike PrefillSM90Plan's, these do not grow with the
// heads but with the packed rows: g = qo heads / kv heads rows a query row.
// - kv chunks: PrefillBinarySearchKVChunkSize splits only when the works fit 2 x SMs / kv heads
//   (max_batch_size_if_split); when the tiles alone do not, it ends at the longest kv and does not
//   split. So a split plan has at most 264 works on an H200, and at most 264 x 128 rows (its
//   merge_indptr, 4 bytes a row, then under 136 KB); past that the works are the tiles and a
//   context adds nothing. Requests have context 0 here; the unsplit layout is what grows.
// - T, the tile height, is FA2DetermineCtaTileQ (fi_cta_tile_q) of the average packed length
//   floor(g R / n): below head dim 256, 16 up to 16 (64 where one kv step does not fit shared
//   memory), 64 up to 64, else 128; 64 past 16 at head dims 256..511; 16 up to 32, else 32 from
//   512. A smaller T costs fewer rows a tile but caps the rows R at
//   (cap + 1) n - 1 over g, so each cap (16, 32, 64, none) is tried with R the most rows it allows
//   within max_num_batched_tokens and n x max_model_len, for every request count n up to
//   min(max_num_seqs, max_num_batched_tokens / 2) (a 1-row request goes to the decode wrapper); a
//   further request costs 2 rows, a further tile about T / g, so neither n nor the cap is fixed.
// - For n requests and R rows, k tiles take rows_for_tiles(k) rows: every request gets the k that
//   R / n rows reach, then as many as the spare rows pay for get k + 1 (at most n - 1), and the
//   remaining rows, too few for a further tile, go to the others. Past the first step (from 2 rows)
//   a tile costs floor or ceil of T / g rows, the same for every request, so this level filling is
//   the most tiles where g divides T (a power-of-two group); otherwise a few more may fit.
// The layout with the most int workspace bytes (fi_int_workspace_bytes, alignment included) wins.
batch fi_fa2_widest_step(const engine_settings& e, int64_t group, int64_t head_dim,
                         const flashinfer_options& o) {
  const int64_t g = std::max<int64_t>(group, 1);
  const int64_t model_len = e.max_model_len;
  const int64_t most = std::min(e.max_num_seqs, e.max_num_batched_tokens / 2);
  if (most < 1 || model_len < 2) return {};
  fa2_layout best;
  for (const int64_t cap : {16, 32, 64, 0})
    for (int64_t n = 1; n <= most; ++n) {
      int64_t rows = std::min(e.max_num_batched_tokens, checked_mul(n, model_len, "rows"));
      if (cap > 0) rows = std::min(rows, ((cap + 1) * n - 1) / g);
      if (rows < 2 * n) continue;
      const fa2_layout l = lay_out(n, rows, g, head_dim, model_len, o);
      if (l.bytes > best.bytes) best = l;
    }
  if (best.n == 0) return {};
  std::vector<int64_t> q(static_cast<std::size_t>(best.n), best.base);
  for (int64_t i = 0; i < best.raised; ++i) q[static_cast<std::size_t>(i)] = best.next;
  int64_t spare = best.rows - (best.n - best.raised) * best.base - best.raised * best.next;
  for (std::size_t i = q.size(); i-- > 0 && spare > 0;) {  // short of a tile: no tile gained
    const int64_t add = std::min(spare, model_len - q[i]);
    q[i] += add;
    spare -= add;
  }
  batch b;
  for (int64_t x : q) {
    b.seq_lens.push_back(x);
    b.query_lens.push_back(x);
  }
  return b;
}

}  // namespace headroom
