// The indexer's compressed lengths and DeepGEMM's SM90 metadata scheduler, sized (mqa_meta.hpp).
#include "core/backends/mqa_meta.hpp"

#include <algorithm>
#include <string>

#include "core/util/checked.hpp"
#include "core/util/error.hpp"

namespace headroom {

std::vector<int32_t> compressed_lens(const engine_step& st, int64_t ratio, bool unclamped) {
  std::vector<int32_t> out;
  for (int64_t i = 0; i < st.num_reqs_padded; ++i) {
    const int64_t len = i < st.b.num_seqs() ? st.b.seq_lens[static_cast<std::size_t>(i)] : 0;
    const int64_t work = ratio > 0 ? len / ratio : len;
    out.push_back(static_cast<int32_t>(len > 0 && !unclamped ? std::max<int64_t>(work, 1) : work));
  }
  return out;
}

mqa_meta_plan plan_mqa_meta(const std::vector<int32_t>& context_lens) {
  mqa_meta_plan p;
  p.batch = static_cast<int64_t>(context_lens.size());
  if (p.batch > mqa_max_batch)
    throw input_error("", "batch", std::to_string(p.batch) + " requests",
                      "the MQA metadata kernel holds at most " + std::to_string(mqa_max_batch));
  p.aligned = ceil_div(p.batch, mqa_batch_align) * mqa_batch_align;
  p.context_lens = context_lens;
  p.buffers = {{"shared:prefix_sum", 4 * p.aligned, 4}, {"schedule_metadata", 4 * 2 * (mqa_num_sms + 1), 4}};
  return p;
}

std::vector<buffer_need> mqa_meta_needs(const mqa_meta_plan& p) {
  // The search's predicate prefix_sum[mid] <= seg_start holds for every request when the total is
  // 0 (every seg_start is 0), so q_idx = B and prefix_sum[B] is read; otherwise q_idx < B.
  const bool empty =
      std::all_of(p.context_lens.begin(), p.context_lens.end(), [](int32_t x) { return x == 0; });
  const int64_t read_end = empty ? p.batch + 1 : p.batch;
  return {{"shared:prefix_sum", 4, std::max(read_end, p.aligned)},
          {"schedule_metadata", 4, 2 * (mqa_num_sms + 1)}};
}

}  // namespace headroom
