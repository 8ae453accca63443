// A batch as the metadata builders see it: one sequence length and one query length per request.
// Decode requests have query length 1; prefill requests have query length > 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace headroom {

struct batch {
  std::vector<int64_t> seq_lens;    // total tokens per request (context + new)
  std::vector<int64_t> query_lens;  // new tokens per request, 1 <= q <= seq_len
  int64_t num_seqs() const { return static_cast<int64_t>(seq_lens.size()); }
  int64_t num_tokens() const;     // sum of query_lens
  int64_t max_query_len() const;  // 0 for an empty batch
  bool is_decode() const { return max_query_len() <= 1; }
  bool operator==(const batch&) const = default;
};

// num_seqs decode requests, each seq_len tokens long.
batch decode_batch(int64_t num_seqs, int64_t seq_len);

// Limits on batches read from files (absurd sizes are rejected before allocation).
inline constexpr int64_t max_batch_seqs = 1'000'000;
inline constexpr int64_t max_seq_len = 1LL << 31;

// Throws input_error naming file and field when lengths disagree, are non-positive, or q > seq.
void validate(const batch& b, const std::string& file, const std::string& field);

}  // namespace headroom
