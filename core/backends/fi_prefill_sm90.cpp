// PrefillSM90Plan's schedule and int workspace parts (fi_prefill_sm90.hpp). FlashInfer stores every
// index in int32 and sums some in uint32; here all of it is int64, and a value an int32 slot of
// FlashInfer's could not hold is an input_error instead of a wrapped value.
#include "core/backends/fi_prefill_sm90.hpp"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "core/util/checked.hpp"
#include "core/util/error.hpp"

namespace headroom {
namespace {

constexpr int64_t int32_max = std::numeric_limits<int32_t>::max();

int32_t narrow(int64_t v, const char* field) {
  if (v > int32_max)
    throw input_error("flashinfer", field, std::to_string(v),
                      "PrefillSM90Plan keeps it in an int32 slot (at most 2^31 - 1)");
  return static_cast<int32_t>(v);
}

// The kv a causal query tile reads, right-aligned (packed_causal_kv_end with the group size 1 the
// FA3 path always passes: it does not pack query heads into a tile). The last tile reads it all.
int64_t causal_kv_end(int64_t qo_len, int64_t kv_len, int64_t tile, int64_t tile_q, int64_t tiles) {
  if (tile + 1 == tiles) return kv_len;
  return std::max<int64_t>(std::min(kv_len - qo_len + (tile + 1) * tile_q, kv_len), 0);
}

// MinHeap of scheduler heap.h: (cta, accumulated cost) under std::push_heap / std::pop_heap ordered
// by cost alone, so equal costs come out in the standard library's heap order, as upstream. The cost
// is a float as upstream's: a double would break ties (and round sums) differently and deal the
// tiles to other CTAs.
class cta_heap {
 public:
  explicit cta_heap(int64_t n) {
    for (int64_t i = 0; i < n; ++i) h_.emplace_back(static_cast<int>(i), 0.f);  // all 0: a heap
  }
  std::pair<int, float> pop() {
    std::pop_heap(h_.begin(), h_.end(), later);
    const auto top = h_.back();
    h_.pop_back();
    return top;
  }
  void push(std::pair<int, float> e) {
    h_.push_back(e);
    std::push_heap(h_.begin(), h_.end(), later);
  }

 private:
  static bool later(const std::pair<int, float>& a, const std::pair<int, float>& b) {
    return a.second > b.second;
  }
  std::vector<std::pair<int, float>> h_;
};

struct work {
  int32_t tile, qo_indptr, kv_indptr, qo_len, kv_len, head, request;
};

}  // namespace

fi_prefill_sm90_plan plan_fi_prefill_sm90(int64_t builder_heads, int64_t kv_heads, int64_t head_dim_vo,
                                          const batch& b, const flashinfer_options& o, bool causal) {
  if (kv_heads <= 0 || builder_heads < 0)
    throw input_error("flashinfer", "num_kv_heads", std::to_string(kv_heads), "at least 1");
  if (builder_heads % kv_heads != 0)  // FlashInfer raises
    throw input_error("flashinfer", "num_qo_heads", std::to_string(builder_heads),
                      "a multiple of num_kv_heads " + std::to_string(kv_heads));
  if (o.device.num_sms <= 0)  // the heap would be popped empty
    throw input_error("flashinfer", "num_sms", std::to_string(o.device.num_sms), "at least 1");
  if (o.page_size <= 0)
    throw input_error("flashinfer", "page_size", std::to_string(o.page_size), "at least 1");
  if (b.num_seqs() == 0)  // FlashInfer's B - 1 would wrap in uint32
    throw input_error("batch", "num_seqs", "0", "PrefillSM90Plan needs a request");
  fi_prefill_sm90_plan p;
  p.builder_heads = builder_heads, p.kv_heads = kv_heads, p.head_dim_vo = head_dim_vo;
  p.batch_size = b.num_seqs(), p.causal = causal, p.cuda_graph = o.cuda_graph;
  p.num_ctas = o.device.num_sms;
  p.total_num_rows = o.total_num_rows > 0 ? o.total_num_rows : b.num_tokens();
  if (p.total_num_rows > int64_t{std::numeric_limits<uint32_t>::max()} - 255)  // uint32, + T_q - 1
    throw input_error("flashinfer", "total_num_rows", std::to_string(p.total_num_rows), "under 2^32 - 255");
  p.cta_tile_q = fi_sm90_cta_tile_q(head_dim_vo);

  // (request, qo_len, kv_len) by kv length, longest first; std::sort, not stable, as upstream.
  std::vector<std::tuple<int64_t, int64_t, int64_t>> order;
  std::vector<int32_t> qo_start{0}, kv_start{0};
  for (int64_t i = 0; i < p.batch_size; ++i) {
    const int64_t q = b.query_lens[i], kv = b.seq_lens[i];
    if (q < 0 || kv < 0)
      throw input_error("batch", "request " + std::to_string(i), std::to_string(q) + "/" + std::to_string(kv),
                        "non-negative query and kv lengths");
    order.emplace_back(i, q, kv);
    qo_start.push_back(narrow(checked_add(qo_start.back(), q), "qo_indptr"));
    kv_start.push_back(narrow(checked_add(kv_start.back(), ceil_div(kv, o.page_size)), "kv_indptr"));
  }
  std::sort(order.begin(), order.end(),
            [](const auto& x, const auto& y) { return std::get<2>(x) > std::get<2>(y); });

  p.max_works_per_head =
      narrow(ceil_div(p.total_num_rows, p.cta_tile_q) + p.batch_size - 1, "max works per head");
  p.same_schedule_for_all_heads = p.max_works_per_head > fi_sm90_same_schedule_above;

  cta_heap heap(p.num_ctas);
  std::vector<std::vector<work>> per_cta(static_cast<std::size_t>(p.num_ctas));
  const int64_t heads = p.same_schedule_for_all_heads ? 1 : builder_heads;
  int64_t tiles_per_head = 0;
  for (const auto& [i, q, kv] : order) tiles_per_head += ceil_div(q, p.cta_tile_q);
  const auto works = static_cast<std::size_t>(checked_mul(heads, tiles_per_head, "works"));
  for (auto& list : per_cta) list.reserve(works / per_cta.size() + 1);  // the heap deals them about evenly
  for (int64_t h = 0; h < heads; ++h)
    for (const auto& [i, q, kv] : order) {
      const int64_t tiles = ceil_div(q, p.cta_tile_q);
      for (int64_t t = tiles - 1; t >= 0; --t) {  // last tile first
        const auto [cta, cost] = heap.pop();
        const int64_t kv_end = causal ? causal_kv_end(q, kv, t, p.cta_tile_q, tiles) : kv;
        heap.push({cta, cost + (2 * static_cast<float>(p.cta_tile_q) + static_cast<float>(kv_end))});
        per_cta[cta].push_back({static_cast<int32_t>(t), qo_start[i], kv_start[i], static_cast<int32_t>(q),
                                narrow(kv, "kv_len"), static_cast<int32_t>(h), static_cast<int32_t>(i)});
      }
    }

  p.work_indptr.assign(1, 0);
  for (auto* part : {&p.qo_tile_indices, &p.qo_indptr, &p.kv_indptr, &p.qo_len, &p.kv_len, &p.head_indices,
                     &p.batch_indices})
    part->reserve(works);
  for (const auto& list : per_cta) {
    p.work_indptr.push_back(narrow(p.work_indptr.back() + static_cast<int64_t>(list.size()), "work_indptr"));
    for (const work& w : list) {
      p.qo_tile_indices.push_back(w.tile), p.qo_indptr.push_back(w.qo_indptr);
      p.kv_indptr.push_back(w.kv_indptr), p.qo_len.push_back(w.qo_len), p.kv_len.push_back(w.kv_len);
      p.head_indices.push_back(w.head), p.batch_indices.push_back(w.request);
    }
  }
  p.total_works = p.work_indptr.back();
  // Graphs: parts sized for any batch of total_num_rows rows, so a replay fits the captured buffers.
  p.allocated_works =
      !o.cuda_graph ? p.total_works
      : p.same_schedule_for_all_heads
          ? p.max_works_per_head
          : narrow(checked_mul(p.max_works_per_head, builder_heads, "works"), "max_total_num_works");
  return p;
}

}  // namespace headroom
