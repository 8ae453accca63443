// Random attention inputs with a shuffled paged KV cache (see inputs.hpp).
#include "kernels/inputs.hpp"

#include <algorithm>
#include <bit>
#include <numeric>
#include <string>

#include "core/check/executor.hpp"
#include "core/util/checked.hpp"
#include "core/util/error.hpp"
#include "kernels/attention_common.hpp"
#include "kernels/input_values.hpp"
#include "kernels/numeric.hpp"

namespace headroom {

static_assert(std::has_single_bit(static_cast<uint64_t>(max_sim_kv_elems)) &&
              std::has_single_bit(static_cast<uint64_t>(max_engine_input_elems)));

input_cap input_cap_of(target_kind t) { return t == target_kind::engine ? engine_input_cap : sim_input_cap; }

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

// n values of one stream (input_values.hpp).
template <class T>
std::vector<T> stream_values(uint64_t key, int64_t n) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = input_value<T>(key, i);
  return v;
}

// The layer's geometry, checked for the simulator's limits.
template <class T>
attention_inputs<T> layer_inputs(const rank_layer& l, int64_t block_size, kv_layout layout) {
  check_geometry(l, block_size);
  attention_inputs<T> in;
  in.layout = layout;
  in.num_heads = l.num_heads;
  in.num_kv_heads = l.num_kv_heads;
  in.head_size = l.head_size;
  in.block_size = block_size;
  in.sliding_window = l.sliding_window;
  return in;
}

// `blocks` physical blocks of `first`.. in a random order.
std::vector<int32_t> shuffled_blocks(splitmix64& rng, int64_t blocks, int32_t first) {
  std::vector<int32_t> perm(static_cast<std::size_t>(blocks));
  std::iota(perm.begin(), perm.end(), first);
  for (std::size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[rng.next() % i]);
  return perm;
}

// The packed cache from k_cache and v_cache: row r (a slot's kv head) is K row r, then V row r.
template <class T>
void pack_kv(attention_inputs<T>& in) {
  const auto D = static_cast<std::size_t>(in.head_size), rows = in.k_cache.size() / D;
  in.kv_cache.resize(2 * in.k_cache.size());
  for (std::size_t r = 0; r < rows; ++r) {
    std::copy_n(in.k_cache.begin() + static_cast<std::ptrdiff_t>(r * D), D,
                in.kv_cache.begin() + static_cast<std::ptrdiff_t>(2 * r * D));
    std::copy_n(in.v_cache.begin() + static_cast<std::ptrdiff_t>(r * D), D,
                in.kv_cache.begin() + static_cast<std::ptrdiff_t>((2 * r + 1) * D));
  }
  in.k_cache = {};
  in.v_cache = {};
}

// q for `rows` tokens and a cache of `blocks` blocks: their sizes (each at most cap.max_elems), and
// their values unless deferred, made only once both sizes passed the check.
template <class T>
void fill_values(attention_inputs<T>& in, uint64_t seed, const rank_layer& l, int64_t rows, int64_t blocks,
                 input_values values, const input_cap& cap) {
  const int64_t kv_elems = checked_product("kv cache", blocks, in.block_size, l.num_kv_heads, l.head_size);
  const int64_t q_elems = checked_product("q", rows, l.num_heads, l.head_size);
  const int log2_cap = std::countr_zero(static_cast<uint64_t>(cap.max_elems));
  for (auto [what, n] : {std::pair{" KV elements", kv_elems}, {" q elements", q_elems}})
    if (n > cap.max_elems)
      throw input_error("", "batch", std::to_string(n) + what,
                        "layer " + l.name + ": too large for " + cap.builder + " (at most 2^" +
                            std::to_string(log2_cap) + ")");
  in.value_seed = seed;
  in.q_count = q_elems;
  in.kv_count = kv_elems;
  in.has_values = values == input_values::host;
  if (!in.has_values) return;
  in.q = stream_values<T>(stream_key(seed, value_stream::q), q_elems);
  in.k_cache = stream_values<T>(stream_key(seed, value_stream::k), kv_elems);
  in.v_cache = stream_values<T>(stream_key(seed, value_stream::v), kv_elems);
  if (in.layout == kv_layout::packed) pack_kv(in);
}

splitmix64 input_rng(uint64_t seed) { return splitmix64{seed ^ 0x68656164726F6F6Dull}; }  // "headroom"

}  // namespace

template <class T>
attention_inputs<T> make_attention_inputs(const rank_layer& l, const batch& b, int64_t block_size,
                                          uint64_t seed, kv_layout layout, input_values values,
                                          input_cap cap) {
  attention_inputs<T> in = layer_inputs<T>(l, block_size, layout);
  in.max_query_len = b.max_query_len();
  splitmix64 rng = input_rng(seed);
  int64_t blocks = 0;
  in.query_start.push_back(0);
  for (int64_t i = 0; i < b.num_seqs(); ++i) {
    const int64_t len = b.seq_lens[static_cast<std::size_t>(i)];
    const int64_t nb = ceil_div(len, block_size);
    in.max_blocks_per_seq = std::max(in.max_blocks_per_seq, nb);
    blocks = checked_add(blocks, nb, "kv blocks");
    in.seq_lens.push_back(static_cast<int32_t>(len));
    in.query_start.push_back(
        static_cast<int32_t>(in.query_start.back() + b.query_lens[static_cast<std::size_t>(i)]));
  }
  const auto perm = shuffled_blocks(rng, blocks, 0);
  in.block_table.assign(static_cast<std::size_t>(b.num_seqs() * in.max_blocks_per_seq), -1);
  std::size_t next = 0;
  for (int64_t i = 0; i < b.num_seqs(); ++i)
    for (int64_t j = 0; j < ceil_div(in.seq_lens[static_cast<std::size_t>(i)], block_size); ++j)
      in.block_table[static_cast<std::size_t>(i * in.max_blocks_per_seq + j)] = perm[next++];
  fill_values(in, seed, l, in.num_tokens(), blocks, values, cap);
  return in;
}

template <class T>
attention_inputs<T> make_step_inputs(const rank_layer& l, const engine_step& st, int64_t max_num_seqs,
                                     int64_t width, int64_t block_size, uint64_t seed, kv_layout layout,
                                     input_values values, input_cap cap) {
  attention_inputs<T> in = layer_inputs<T>(l, block_size, layout);
  in.max_query_len = st.max_query_len;
  in.max_blocks_per_seq = width;
  in.metadata_rows = st.num_reqs_padded;
  in.q_rows = st.q_rows;
  splitmix64 rng = input_rng(seed);
  const int64_t rows = std::min(st.num_reqs_padded, max_num_seqs);  // rows the engine holds
  in.consistent = st.num_reqs_padded <= max_num_seqs && st.query_start.back() <= st.q_rows;
  in.seq_lens.assign(static_cast<std::size_t>(max_num_seqs), 0);
  in.query_start.assign(st.query_start.begin(), st.query_start.begin() + rows + 1);
  in.query_start.resize(static_cast<std::size_t>(max_num_seqs + 1), in.query_start.back());
  in.block_table.assign(static_cast<std::size_t>(checked_mul(max_num_seqs, width, "block table")), 0);
  int64_t blocks = 0;
  for (int64_t i = 0; i < rows && i < st.b.num_seqs(); ++i) {
    const int64_t len = st.b.seq_lens[static_cast<std::size_t>(i)];
    in.seq_lens[static_cast<std::size_t>(i)] = static_cast<int32_t>(len);
    in.consistent = in.consistent && ceil_div(len, block_size) <= width;
    blocks = checked_add(blocks, std::min(ceil_div(len, block_size), width), "kv blocks");
  }
  const auto perm = shuffled_blocks(rng, blocks, 1);  // block 0 is the null block
  std::size_t next = 0;
  for (int64_t i = 0; i < rows && i < st.b.num_seqs(); ++i)
    for (int64_t j = 0; j < std::min(ceil_div(in.seq_lens[static_cast<std::size_t>(i)], block_size), width);
         ++j)
      in.block_table[static_cast<std::size_t>(i * width + j)] = perm[next++];
  fill_values(in, seed, l, st.q_rows, blocks + 1, values, cap);
  return in;
}

#define HEADROOM_INPUT_INSTANCES(T)                                                                         \
  template attention_inputs<T> make_attention_inputs<T>(const rank_layer&, const batch&, int64_t, uint64_t, \
                                                        kv_layout, input_values, input_cap);                \
  template attention_inputs<T> make_step_inputs<T>(const rank_layer&, const engine_step&, int64_t, int64_t, \
                                                   int64_t, uint64_t, kv_layout, input_values, input_cap);
HEADROOM_INPUT_INSTANCES(float)
HEADROOM_INPUT_INSTANCES(bf16)
HEADROOM_INPUT_INSTANCES(fp16)
#undef HEADROOM_INPUT_INSTANCES

}  // namespace headroom
