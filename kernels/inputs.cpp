// Random attention inputs with a shuffled paged KV cache (see inputs.hpp).
#include "kernels/inputs.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/util/checked.hpp"
#include "core/util/error.hpp"
#include "kernels/attention_common.hpp"
#include "kernels/numeric.hpp"

namespace headroom {

namespace {

// The simulator's limits. The file is not known here: the error names none, and the command that
// read the file attributes it (input_error::in_file).
void check_geometry(const rank_layer& l, int64_t block_size) {
  auto bad = [&](const char* field, int64_t v, const char* why) {
    throw input_error("", field, std::to_string(v), "layer " + l.name + ": " + why);
  };
  if (l.num_kv_heads < 1) bad("num_kv_heads", l.num_kv_heads, "the simulator needs kv heads >= 1");
  if (l.num_heads < 1 || l.num_heads % l.num_kv_heads != 0)
    bad("num_heads", l.num_heads, "must be a positive multiple of num_kv_heads");
  if (l.head_size < 1 || l.head_size > max_kernel_head_size)
    bad("head_size", l.head_size, "the simulator's kernels support head sizes 1..512");
  if (block_size < 1) bad("block_size", block_size, "must be positive");
}

// Two values per 64-bit draw: 23 bits of magnitude and one sign bit each.
template <class T>
std::vector<T> random_values(splitmix64& rng, int64_t n) {
  std::vector<T> v(static_cast<std::size_t>(n));
  auto value = [](uint32_t bits) {
    const float mag = 0.0625f + 0.9375f * static_cast<float>(bits >> 9) * (1.0f / 8388608.0f);
    return from_float<T>(bits & 1u ? mag : -mag);
  };
  std::size_t i = 0;
  for (; i + 1 < v.size(); i += 2) {
    const uint64_t u = rng.next();
    v[i] = value(static_cast<uint32_t>(u));
    v[i + 1] = value(static_cast<uint32_t>(u >> 32));
  }
  if (i < v.size()) v[i] = value(static_cast<uint32_t>(rng.next()));
  return v;
}

}  // namespace

template <class T>
attention_inputs<T> make_attention_inputs(const rank_layer& l, const batch& b, int64_t block_size,
                                          uint64_t seed) {
  check_geometry(l, block_size);
  attention_inputs<T> in;
  in.num_heads = l.num_heads;
  in.num_kv_heads = l.num_kv_heads;
  in.head_size = l.head_size;
  in.block_size = block_size;
  in.sliding_window = l.sliding_window;
  in.max_query_len = b.max_query_len();
  splitmix64 rng{seed ^ 0x68656164726F6F6Dull};  // "headroom"
  int64_t blocks = 0;
  in.query_start.push_back(0);
  for (int64_t i = 0; i < b.num_seqs(); ++i) {
    const int64_t len = b.seq_lens[static_cast<std::size_t>(i)];
    const int64_t nb = ceil_div(len, block_size);
    in.max_blocks_per_seq = std::max(in.max_blocks_per_seq, nb);
    blocks = checked_add(blocks, nb, "kv blocks");
    in.seq_lens.push_back(static_cast<int32_t>(len));
    in.query_start.push_back(static_cast<int32_t>(in.query_start.back() + b.query_lens[static_cast<std::size_t>(i)]));
  }
  const int64_t kv_elems = checked_product("kv cache", blocks, block_size, l.num_kv_heads, l.head_size);
  if (kv_elems > max_sim_kv_elems)
    throw input_error("", "batch", std::to_string(kv_elems) + " KV elements",
                      "layer " + l.name + ": too large for the simulator (at most 2^26)");
  std::vector<int32_t> perm(static_cast<std::size_t>(blocks));
  std::iota(perm.begin(), perm.end(), 0);
  for (std::size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[rng.next() % i]);
  in.block_table.assign(static_cast<std::size_t>(b.num_seqs() * in.max_blocks_per_seq), -1);
  std::size_t next = 0;
  for (int64_t i = 0; i < b.num_seqs(); ++i)
    for (int64_t j = 0; j < ceil_div(in.seq_lens[static_cast<std::size_t>(i)], block_size); ++j)
      in.block_table[static_cast<std::size_t>(i * in.max_blocks_per_seq + j)] = perm[next++];
  in.q = random_values<T>(rng, checked_product("q", in.num_tokens(), l.num_heads, l.head_size));
  in.k_cache = random_values<T>(rng, kv_elems);
  in.v_cache = random_values<T>(rng, kv_elems);
  return in;
}

template attention_inputs<float> make_attention_inputs<float>(const rank_layer&, const batch&, int64_t, uint64_t);
template attention_inputs<bf16> make_attention_inputs<bf16>(const rank_layer&, const batch&, int64_t, uint64_t);
template attention_inputs<fp16> make_attention_inputs<fp16>(const rank_layer&, const batch&, int64_t, uint64_t);

}  // namespace headroom
