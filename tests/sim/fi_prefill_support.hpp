// What fi_prefill_test.cpp needs around the prefill bodies: a plan tiler of the test's own
// (FlashInfer's PrefillSplitQOKVIndptr restated: packed q tiles of cta_tile_q rows times kv chunks,
// independent of core/backends), and a checked simulator run of the family against the fp32
// reference that also counts what the plan left undone (unwritten output rows, reads of
// never-written index entries).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/reference.hpp"
#include "targets/sim/sim_launch.hpp"

namespace headroom::prefill_test {

struct tiler_options {
  int64_t group = 1;           // heads per kv head the PLAN assumes
  int64_t cta_tile_q = 16;     // packed rows per q tile
  int64_t chunk = 0;           // kv chunk in tokens; 0: not split
  int64_t window = 0;          // the layer's sliding window (bounds the chunks of a row)
  int64_t extra_blocks = 0;    // CUDA-graph padding: blocks launched past the written entries
  bool mask = true;            // split: a block_valid_mask over the padded entries
  bool write_padding = false;  // the planner writes the padded entries too (request 0)
};

struct prefill_plan {
  std::vector<int32_t> request_indices, qo_tile_indices, kv_tile_indices, o_indptr, merge_indptr;
  std::vector<uint8_t> mask;  // empty: no mask
  int64_t padded = 0, cta_tile_q = 16, chunk = 0, total_num_rows = 0;
  bool split = false;
  int64_t divisor = 0;  // p.group_div: 0 the layer's group (fi_prefill_group_div), -1 none, else this one
};

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Chunks of a row when split: the kernel's num_kv_chunks (the plan's, in pages, is the same count).
inline int64_t chunks_of(int64_t kv_len, const tiler_options& o) {
  if (o.chunk == 0) return 1;
  const int64_t window_left = o.window > 0 ? o.window - 1 : kv_len;
  return ceil_div(std::min(std::max<int64_t>(kv_len, 1), window_left + o.cta_tile_q), o.chunk);
}

inline prefill_plan tile_prefill(const batch& b, const tiler_options& o) {
  prefill_plan p;
  p.cta_tile_q = o.cta_tile_q, p.chunk = o.chunk, p.split = o.chunk > 0;
  p.o_indptr.push_back(0);
  p.merge_indptr.push_back(0);
  for (int64_t r = 0; r < b.num_seqs(); ++r) {
    const int64_t q = b.query_lens[r], chunks = chunks_of(b.seq_lens[r], o);
    for (int64_t t = 0; t < ceil_div(q * o.group, o.cta_tile_q); ++t)
      for (int64_t c = 0; c < chunks; ++c) {
        p.request_indices.push_back(static_cast<int32_t>(r));
        p.qo_tile_indices.push_back(static_cast<int32_t>(t));
        p.kv_tile_indices.push_back(static_cast<int32_t>(c));
      }
    for (int64_t i = 0; i < q; ++i)
      p.merge_indptr.push_back(p.merge_indptr.back() + static_cast<int32_t>(chunks));
    p.o_indptr.push_back(p.o_indptr.back() + static_cast<int32_t>(q * chunks));
    p.total_num_rows += q;
  }
  const int64_t written = static_cast<int64_t>(p.request_indices.size());
  p.padded = written + o.extra_blocks;
  if (o.write_padding)
    for (auto* v : {&p.request_indices, &p.qo_tile_indices, &p.kv_tile_indices}) v->resize(p.padded, 0);
  if (p.split && o.mask)
    for (int64_t w = 0; w < p.padded; ++w) p.mask.push_back(w < written ? 1 : 0);
  return p;
}

struct prefill_result {
  output_comparison cmp;  // written rows against the reference (unwritten ones: mismatches)
  dtype type = dtype::bf16;
  int64_t oob = 0, uninitialized = 0, races = 0, misuse = 0;
  int64_t uninit_request_indices = 0;  // of `uninitialized`: reads of request_indices
  int64_t unwritten_rows = 0;          // (token, head) output rows with an element never written
  std::string log;
};

template <class T>
constexpr dtype dtype_of() {
  return std::is_same_v<T, float> ? dtype::fp32 : std::is_same_v<T, bf16> ? dtype::bf16 : dtype::fp16;
}

// Scratch of `extent` elements whose first src.size() elements are written (the host's copy of
// the planner's entries); the rest read as never written.
template <class E>
buffer_ref<const E> scratch_prefix(sim::memory& m, const char* name, const std::vector<E>& src,
                                   int64_t extent) {
  const auto r =
      m.alloc<E>(name, std::max<int64_t>(extent, static_cast<int64_t>(src.size())), sim::fill::scratch);
  std::copy(src.begin(), src.end(), r.data);
  std::fill_n(m.at(r.id).written, src.size(), uint8_t{1});
  return {r.data, r.extent, r.id};
}

template <class T>
prefill_result run_prefill(const rank_layer& l, const batch& b, int64_t block_size, const prefill_plan& pl,
                           uint64_t seed) {
  const auto host = make_attention_inputs<T>(l, b, block_size, seed);
  sim::memory m;
  const sim_inputs<T> in = upload_inputs(m, host);
  fi_prefill_params<T> p;
  p.in = in.in;
  p.output = in.output;
  p.request_indices = scratch_prefix(m, "request_indices", pl.request_indices, pl.padded);
  p.qo_tile_indices = scratch_prefix(m, "qo_tile_indices", pl.qo_tile_indices, pl.padded);
  p.kv_tile_indices = scratch_prefix(m, "kv_tile_indices", pl.kv_tile_indices, pl.padded);
  p.o_indptr = m.upload("o_indptr", pl.o_indptr);
  if (!pl.mask.empty()) p.block_valid_mask = m.upload("block_valid_mask", pl.mask);
  p.padded = pl.padded, p.cta_tile_q = pl.cta_tile_q, p.kv_chunk_tokens = pl.chunk;
  p.total_num_rows = pl.total_num_rows, p.split = pl.split;
  if (pl.divisor == 0)
    p.group_div = fi_prefill_group_div(p.in);
  else if (pl.divisor > 0)
    p.group_div = fastdiv32(static_cast<uint32_t>(pl.divisor));
  const int64_t H = l.num_heads, D = l.head_size;
  if (pl.split) {
    p.merge_indptr = m.upload("merge_indptr", pl.merge_indptr);
    p.tmp_v = m.alloc<T>("tmp_v", int64_t{pl.o_indptr.back()} * H * D, sim::fill::scratch);
    p.tmp_s = m.alloc<float>("tmp_s", int64_t{pl.o_indptr.back()} * H, sim::fill::scratch);
  }
  run_checked<T>(m, p);

  prefill_result r;
  r.oob = m.log.oob_count, r.uninitialized = m.log.uninitialized_reads;
  r.races = m.log.races, r.misuse = m.log.misuse_count;
  r.uninit_request_indices = m.find("request_indices")->stats.uninitialized;
  r.log = m.log.describe();
  const uint8_t* written = m.at(in.output.id).written;
  for (int64_t row = 0; row * D < in.output.extent; ++row)
    r.unwritten_rows += !std::all_of(written + row * D, written + (row + 1) * D, [](uint8_t w) { return w; });
  std::vector<float> out;
  for (const T x : m.download(in.output)) out.push_back(to_float(x));
  r.type = dtype_of<T>();
  r.cmp = compare_output(out, attention_reference(host), r.type, H, D);
  return r;
}

}  // namespace headroom::prefill_test
