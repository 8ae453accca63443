// flashinfer_launch.hpp: headroom's FlashInfer decode params as the engine driver's launch.
#include "targets/engine/flashinfer_launch.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/elem_type.hpp"
#include "kernels/fi_decode.hpp"
#include "kernels/fi_prefill.hpp"

namespace headroom::engine {
namespace {

using nlohmann::json;

[[noreturn]] void refuse(const std::string& what) {
  throw std::invalid_argument("flashinfer launch: " + what);
}

const gpu::wire_buffer& buffer_of(const gpu::gpu_request& rq, int32_t id) {
  if (id < 0 || static_cast<std::size_t>(id) >= rq.buffers.size())
    refuse("buffer id " + std::to_string(id) + " out of range");
  return rq.buffers[static_cast<std::size_t>(id)];
}

// The arena byte offset of a base pointer the params give.
template <class Ref>
int64_t at(const gpu::gpu_request& rq, const engine_arena& a, const Ref& r) {
  return arena_offset(rq, a, r.id, r.offset, "flashinfer launch");
}

// Entry i of an int32 input as the host wrote it.
int32_t host_int(const gpu::wire_buffer& b, int64_t i) {
  if (i < 0 || (i + 1) * 4 > static_cast<int64_t>(b.data.size()))
    refuse(b.name + " has no entry " + std::to_string(i));
  int32_t v;
  std::memcpy(&v, b.data.data() + i * 4, 4);
  return v;
}

// FlashInfer's page table for the run's sequences: request s reads pages indptr[s] .. indptr[s+1] of
// `indices` (its block-table row's first ceil(len / page) entries), the last one holding
// last_page_len[s] tokens (paged_kv_t::get_length).
json page_table(const gpu::gpu_request& rq, const paged_attention_inputs<bf16>& in) {
  const auto& table = buffer_of(rq, in.block_table.id);
  const auto& lens = buffer_of(rq, in.seq_lens.id);
  const int64_t bs = in.block_size, width = in.max_blocks_per_seq;
  json indptr = json::array({0}), indices = json::array(), last = json::array();
  for (int64_t s = 0; s < in.num_seqs; ++s) {
    const int64_t len = host_int(lens, in.seq_lens.offset + s);
    const int64_t pages = (len + bs - 1) / bs;
    if (len < 0 || pages > width) refuse("sequence " + std::to_string(s) + " is longer than its table row");
    for (int64_t i = 0; i < pages; ++i)
      indices.push_back(host_int(table, in.block_table.offset + s * width + i));
    indptr.push_back(indptr.back().get<int64_t>() + pages);
    last.push_back(pages == 0 ? 0 : len - (pages - 1) * bs);
  }
  return {{"indptr", indptr}, {"indices", indices}, {"last_page_len", last}};
}

}  // namespace

std::string flashinfer_unsupported(int64_t heads, int64_t kv_heads, int64_t head_size, gpu::elem_type type,
                                   bool prefill) {
  const char* kernel = prefill ? "prefill" : "decode";
  if (type != gpu::elem_type::bf16 && type != gpu::elem_type::fp16)
    return std::string("FlashInfer's ") + kernel + " runs bf16 and fp16 here, not fp32";
  if (std::find(std::begin(fi_engine_head_sizes), std::end(fi_engine_head_sizes), head_size) ==
      std::end(fi_engine_head_sizes))
    return "head size " + std::to_string(head_size) + " is not one FlashInfer's " + kernel +
           " is built for (its DISPATCH_HEAD_DIM)";
  if (kv_heads <= 0 || heads % kv_heads != 0)
    return std::to_string(heads) + " query heads are not a multiple of " + std::to_string(kv_heads) +
           " kv heads";
  const int64_t g = heads / kv_heads;
  if (!prefill &&
      std::find(std::begin(fi_engine_groups), std::end(fi_engine_groups), g) == std::end(fi_engine_groups))
    return "GQA group " + std::to_string(heads) + "/" + std::to_string(kv_heads) +
           " is not one FlashInfer's decode dispatches (its DISPATCH_GQA_GROUP_SIZE)";
  return {};
}

namespace {

// What both kernels take: the geometry, q, the paged K / V, the output, the plan's scratch and the
// work lists both share, and the page table.
template <class P>
json common_launch(const gpu::gpu_request& rq, const engine_arena& a, const P& p, const char* kernel,
                   bool split, int64_t chunk_tokens) {
  const auto& in = p.in;
  if (const std::string why = flashinfer_unsupported(in.num_heads, in.num_kv_heads, in.head_size, rq.type,
                                                     rq.fam == gpu::family::fi_prefill);
      !why.empty())
    refuse(why);
  const int64_t row = in.kv_row_stride, KV = in.num_kv_heads, bs = in.block_size;
  json j = {{"kernel", kernel},
            {"dtype", rq.type == gpu::elem_type::bf16 ? "bf16" : "fp16"},
            {"head_dim", in.head_size},
            {"num_qo_heads", in.num_heads},
            {"num_kv_heads", KV},
            {"page_size", bs},
            {"batch_size", in.num_seqs},
            {"padded", p.padded},
            {"split", split},
            {"kv_chunk_size", chunk_tokens},
            // vLLM's FlashInfer backend: window_left = sliding_window - 1, -1 for none.
            {"window_left", in.sliding_window > 0 ? in.sliding_window - 1 : -1},
            {"sm_scale", in.scale},
            {"q_strides", {in.num_heads * in.head_size, in.head_size}},
            // NHD pages [page][token][kv head][D] with the layout's row stride (packed: 2 * D).
            {"kv_strides", {bs * KV * row, KV * row, row}},
            {"at",
             {{"q", at(rq, a, in.q)},
              {"k", at(rq, a, in.k_cache)},
              {"v", at(rq, a, in.v_cache)},
              {"o", at(rq, a, p.output)},
              {"tmp_v", split ? at(rq, a, p.tmp_v) : -1},
              {"tmp_s", split ? at(rq, a, p.tmp_s) : -1},
              {"request_indices", at(rq, a, p.request_indices)},
              {"kv_tile_indices", at(rq, a, p.kv_tile_indices)},
              {"o_indptr", at(rq, a, p.o_indptr)}}}};
  j.update(page_table(rq, in));
  return j;
}

template <class P>
P params_of(const gpu::gpu_request& rq) {
  // The params' layout does not depend on T (buffer_ref<T> is a pointer and integers).
  P p;
  if (rq.params.size() != sizeof(p)) refuse("params of the wrong size");
  std::memcpy(static_cast<void*>(&p), rq.params.data(), sizeof(p));
  return p;
}

}  // namespace

json flashinfer_decode_launch(const gpu::gpu_request& rq, const engine_arena& a) {
  if (rq.fam != gpu::family::fi_decode) refuse("this run is another kernel family");
  const auto p = params_of<fi_decode_params<bf16>>(rq);
  json j = common_launch(rq, a, p, "flashinfer_batch_decode", p.split, p.chunk_tokens);
  j["num_work"] = p.num_work;  // the driver builds the valid-block mask from it
  return j;
}

json flashinfer_prefill_launch(const gpu::gpu_request& rq, const engine_arena& a) {
  if (rq.fam != gpu::family::fi_prefill) refuse("this run is another kernel family");
  const auto p = params_of<fi_prefill_params<bf16>>(rq);
  if (!engine::fi_prefill_tile_built(p.in.head_size, p.cta_tile_q))
    refuse("no FlashInfer prefill instantiation for head size " + std::to_string(p.in.head_size) +
           " and cta_tile_q " + std::to_string(p.cta_tile_q));
  json j = common_launch(rq, a, p, "flashinfer_batch_prefill", p.split, p.kv_chunk_tokens);
  j["cta_tile_q"] = p.cta_tile_q;
  j["total_num_rows"] = p.total_num_rows;
  j["at"]["q_indptr"] = at(rq, a, p.in.query_start);
  j["at"]["qo_tile_indices"] = at(rq, a, p.qo_tile_indices);
  j["at"]["merge_indptr"] = p.split ? at(rq, a, p.merge_indptr) : -1;
  j["at"]["block_valid_mask"] = p.split && p.block_valid_mask.extent > 0 ? at(rq, a, p.block_valid_mask) : -1;
  return j;
}

}  // namespace headroom::engine
