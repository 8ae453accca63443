// Batch generators: lengths near tile, segment, chunk and page boundaries, within a work budget.
#include "generators/batch_gen.hpp"

#include <algorithm>

#include "generators/pick.hpp"

namespace headroom::generators {

namespace {

// Longest sequence n requests may each have within the work budget (decode: query_len 1).
int64_t len_cap(const batch_limits& lim, int64_t n) {
  const int64_t per = lim.max_work / std::max<int64_t>(1, n * lim.token_cost);
  return std::clamp<int64_t>(per, 1, lim.max_len);
}

// One prefill request (query_len >= 2) whose query_len x seq_len fits the cost cap.
rc::Gen<std::pair<int64_t, int64_t>> prefill_request(int64_t pair_cap) {
  int64_t q_cap = 2;
  while ((q_cap + 1) * (q_cap + 1) <= pair_cap && q_cap < 160) ++q_cap;
  auto q_gen = rc::gen::weightedOneOf<int64_t>(
      {{1, rc::gen::inRange<int64_t>(2, q_cap + 1)},
       {2,
        rc::gen::map(rc::gen::tuple(rc::gen::element<int64_t>(16, 64, 128), rc::gen::inRange<int64_t>(-1, 2)),
                     [q_cap](const std::tuple<int64_t, int64_t>& t) {
                       return std::clamp<int64_t>(std::get<0>(t) + std::get<1>(t), 2, q_cap);
                     })}});
  return rc::gen::mapcat(q_gen, [pair_cap](int64_t q) {
    const int64_t ctx_cap = std::max<int64_t>(0, pair_cap / q - q);
    auto ctx = rc::gen::weightedOneOf<int64_t>(
        {{2, rc::gen::just<int64_t>(0)}, {1, rc::gen::inRange<int64_t>(0, ctx_cap + 1)}});
    return rc::gen::map(ctx, [q](int64_t c) { return std::make_pair(q, q + c); });
  });
}

batch concat(batch a, const batch& b) {
  a.seq_lens.insert(a.seq_lens.end(), b.seq_lens.begin(), b.seq_lens.end());
  a.query_lens.insert(a.query_lens.end(), b.query_lens.begin(), b.query_lens.end());
  return a;
}

}  // namespace

rc::Gen<int64_t> lengths(int64_t cap) {
  cap = std::max<int64_t>(1, cap);
  auto near = rc::gen::map(rc::gen::tuple(rc::gen::element<int64_t>(1, 16, 64, 128, 240, 256, 512),
                                          rc::gen::inRange<int64_t>(-2, 3)),
                           [cap](const std::tuple<int64_t, int64_t>& t) {
                             return std::clamp<int64_t>(std::get<0>(t) + std::get<1>(t), 1, cap);
                           });
  return rc::gen::weightedOneOf<int64_t>({{1, near}, {1, rc::gen::inRange<int64_t>(1, cap + 1)}});
}

rc::Gen<batch> decode_batches(const batch_limits& lim) {
  const int64_t most = std::max<int64_t>(1, lim.max_decode_seqs + 1);
  return rc::gen::mapcat(rc::gen::inRange<int64_t>(1, most + 1), [lim](int64_t n) {
    return rc::gen::map(
        rc::gen::container<std::vector<int64_t>>(static_cast<std::size_t>(n), lengths(len_cap(lim, n))),
        [n](std::vector<int64_t> seqs) {
          return batch{std::move(seqs), std::vector<int64_t>(static_cast<std::size_t>(n), 1)};
        });
  });
}

rc::Gen<batch> prefill_batches(const batch_limits& lim) {
  return rc::gen::mapcat(rc::gen::inRange<int64_t>(1, 4), [lim](int64_t n) {
    const int64_t pair_cap = std::max<int64_t>(4, lim.max_work / std::max<int64_t>(1, n * lim.token_cost));
    return rc::gen::map(rc::gen::container<std::vector<std::pair<int64_t, int64_t>>>(
                            static_cast<std::size_t>(n), prefill_request(pair_cap)),
                        [](const std::vector<std::pair<int64_t, int64_t>>& reqs) {
                          batch b;
                          for (auto [q, s] : reqs) b.query_lens.push_back(q), b.seq_lens.push_back(s);
                          return b;
                        });
  });
}

rc::Gen<batch> mixed_batches(const batch_limits& lim) {
  batch_limits half = lim;
  half.max_work = lim.max_work / 2;
  half.max_decode_seqs = std::max<int64_t>(1, lim.max_decode_seqs / 2);
  return rc::gen::map(
      rc::gen::tuple(decode_batches(half), prefill_batches(half)),
      [](const std::tuple<batch, batch>& t) { return concat(std::get<0>(t), std::get<1>(t)); });
}

rc::Gen<batch> batches(const batch_limits& lim) {
  return rc::gen::weightedOneOf<batch>(
      {{6, decode_batches(lim)}, {1, prefill_batches(lim)}, {2, mixed_batches(lim)}});
}

int64_t batch_work(const batch& b, int64_t token_cost) {
  int64_t w = 0;
  for (std::size_t i = 0; i < b.seq_lens.size(); ++i) w += b.query_lens[i] * b.seq_lens[i];
  return w * token_cost;
}

}  // namespace headroom::generators
