// Batch helpers and validation.
#include "core/backends/batch.hpp"

#include <algorithm>

#include "core/util/checked.hpp"
#include "core/util/error.hpp"

namespace headroom {

int64_t batch::num_tokens() const {
  int64_t t = 0;
  for (int64_t q : query_lens) t = checked_add(t, q, "batch tokens");
  return t;
}

int64_t batch::max_query_len() const {
  int64_t m = 0;
  for (int64_t q : query_lens) m = std::max(m, q);
  return m;
}

batch decode_batch(int64_t num_seqs, int64_t seq_len) {
  batch b;
  b.seq_lens.assign(static_cast<std::size_t>(num_seqs), seq_len);
  b.query_lens.assign(static_cast<std::size_t>(num_seqs), 1);
  return b;
}

void validate(const batch& b, const std::string& file, const std::string& field) {
  if (b.seq_lens.empty())
    throw input_error(file, field + ".seq_lens", "[]", "a batch needs at least one request");
  if (b.seq_lens.size() != b.query_lens.size())
    throw input_error(file, field + ".query_lens", std::to_string(b.query_lens.size()) + " entries",
                      "must have as many entries as seq_lens (" + std::to_string(b.seq_lens.size()) + ")");
  if (static_cast<int64_t>(b.seq_lens.size()) > max_batch_seqs)
    throw input_error(file, field + ".seq_lens", std::to_string(b.seq_lens.size()) + " entries",
                      "more than " + std::to_string(max_batch_seqs) + " requests");
  for (std::size_t i = 0; i < b.seq_lens.size(); ++i) {
    const std::string at = "[" + std::to_string(i) + "]";
    if (b.seq_lens[i] < 1 || b.seq_lens[i] > max_seq_len)
      throw input_error(file, field + ".seq_lens" + at, std::to_string(b.seq_lens[i]),
                        "must be in 1.." + std::to_string(max_seq_len));
    if (b.query_lens[i] < 1 || b.query_lens[i] > b.seq_lens[i])
      throw input_error(file, field + ".query_lens" + at, std::to_string(b.query_lens[i]),
                        "must be in 1..seq_lens" + at + " (" + std::to_string(b.seq_lens[i]) + ")");
  }
}

}  // namespace headroom
