// vllm_triton_launch.hpp: headroom's Triton params as vLLM unified_attention arguments.
#include "targets/engine/vllm_triton_launch.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/elem_type.hpp"
#include "kernels/triton_attention.hpp"

namespace headroom::engine {
namespace {

using nlohmann::json;

const char* torch_dtype(gpu::elem_type t) {
  switch (t) {
    case gpu::elem_type::bf16:
      return "bfloat16";
    case gpu::elem_type::fp16:
      return "float16";
    default:
      return "float32";
  }
}

struct view_maker {
  const gpu::gpu_request& rq;
  const engine_arena& a;
  // A view of buffer `id` starting `offset` elements in; shape and strides in elements.
  json operator()(int32_t id, const char* dtype, int64_t offset, std::vector<int64_t> shape,
                  std::vector<int64_t> strides) const {
    if (id < 0 || static_cast<std::size_t>(id) >= rq.buffers.size())
      throw std::invalid_argument("vllm triton launch: buffer id " + std::to_string(id) + " out of range");
    const auto& b = rq.buffers[static_cast<std::size_t>(id)];
    int64_t last = offset;  // the view's last element must lie in its buffer (a shape from the params)
    for (std::size_t k = 0; k < shape.size(); ++k) last += (shape[k] - 1) * strides[k];
    if (offset < 0 || last >= b.extent)
      throw std::invalid_argument("vllm triton launch: a view of " + b.name + " reaches element " +
                                  std::to_string(last) + " of " + std::to_string(b.extent));
    return json{
        {"buffer", b.name},          {"dtype", dtype}, {"start", a.slots[static_cast<std::size_t>(id)].start},
        {"offset", offset},          {"shape", shape}, {"strides", strides},
        {"elem_bytes", b.elem_bytes}};
  }
};

template <class T>
json launch_of(const gpu::gpu_request& rq, const engine_arena& a, const json& args) {
  triton_params<T> p;
  if (rq.params.size() != sizeof(p))
    throw std::invalid_argument("vllm triton launch: params of the wrong size");
  std::memcpy(&p, rq.params.data(), sizeof(p));
  const auto& in = p.in;
  const char* dt = torch_dtype(rq.type);
  const view_maker view{rq, a};
  const int64_t H = in.num_heads, KV = in.num_kv_heads, D = in.head_size, bs = in.block_size;
  const int64_t row = in.kv_row_stride, width = in.max_blocks_per_seq;
  // The KV cache as vLLM's [num_blocks, block_size, num_kv_heads, head_size] with the layout's row
  // stride (the packed layout's K and V are views of one allocation, V head_size elements in).
  const auto& kb = rq.buffers.at(static_cast<std::size_t>(in.k_cache.id));
  const int64_t blocks = (kb.extent - in.k_cache.offset) / (bs * KV * row);
  const std::vector<int64_t> kv_strides = {bs * KV * row, KV * row, row, 1};
  const int64_t rows = rq.buffers.at(static_cast<std::size_t>(in.block_table.id)).extent / width;
  int64_t max_seq_len = 0;  // max_seqlen_k, from the seq_lens the host wrote
  const auto& sl = rq.buffers.at(static_cast<std::size_t>(in.seq_lens.id));
  for (int64_t s = 0; s < in.num_seqs && (s + 1) * 4 <= static_cast<int64_t>(sl.data.size()); ++s) {
    int32_t v;
    std::memcpy(&v, sl.data.data() + s * 4, 4);
    max_seq_len = std::max<int64_t>(max_seq_len, v);
  }
  json views = {
      {"q", view(in.q.id, dt, in.q.offset, {in.num_tokens, H, D}, {H * D, D, 1})},
      {"k", view(in.k_cache.id, dt, in.k_cache.offset, {blocks, bs, KV, D}, kv_strides)},
      {"v", view(in.v_cache.id, dt, in.v_cache.offset, {blocks, bs, KV, D}, kv_strides)},
      {"out", view(p.output.id, dt, p.output.offset, {in.num_tokens, H, D}, {H * D, D, 1})},
      {"block_table", view(in.block_table.id, "int32", in.block_table.offset, {rows, width}, {width, 1})},
      {"seq_lens", view(in.seq_lens.id, "int32", in.seq_lens.offset, {in.num_seqs}, {1})},
      {"query_start", view(in.query_start.id, "int32", in.query_start.offset, {in.num_seqs + 1}, {1})},
  };
  // The plan's buffers are passed whole, as the builder allocates them: the kernel indexes them
  // with the layer's strides, whatever their size.
  for (const auto& [name, ref] : {std::pair{"segm_output", p.segm_output}, std::pair{"segm_max", p.segm_max},
                                  std::pair{"segm_expsum", p.segm_expsum}})
    if (ref.id >= 0)
      views[name] =
          view(ref.id, "float32", ref.offset, {rq.buffers.at(static_cast<std::size_t>(ref.id)).extent}, {1});
  return json{{"kernel", "vllm_triton_unified_attention"},
              {"views", views},
              {"max_seqlen_q", in.max_query_len},
              {"max_seqlen_k", max_seq_len},
              {"softmax_scale", in.scale},
              {"sliding_window", in.sliding_window},
              {"seq_threshold_3D", args.at("seq_threshold_3D")},
              {"num_par_softmax_segments", args.at("num_par_softmax_segments")},
              {"headroom_segmented", p.segmented}};
}

}  // namespace

std::string vllm_triton_unsupported(int64_t head_size) {
  if (head_size < vllm_triton_min_head_size)
    return "head size " + std::to_string(head_size) + " is below vLLM's Triton backend's " +
           std::to_string(vllm_triton_min_head_size);
  return {};
}

json vllm_triton_launch(const gpu::gpu_request& rq, const engine_arena& a) {
  if (rq.fam != gpu::family::triton)
    throw std::invalid_argument(
        "the engine target runs vLLM's Triton unified attention only (this run is "
        "another kernel family)");
  const json args = rq.engine.empty() ? json::object() : json::parse(rq.engine);
  if (!args.contains("seq_threshold_3D") || !args.contains("num_par_softmax_segments"))
    throw std::invalid_argument("vllm triton launch: the request carries no seq_threshold_3D");
  switch (rq.type) {
    case gpu::elem_type::bf16:
      return launch_of<bf16>(rq, a, args);
    case gpu::elem_type::fp16:
      return launch_of<fp16>(rq, a, args);
    default:
      return launch_of<float>(rq, a, args);
  }
}

std::string vllm_triton_engine_args(int64_t thr, int64_t segments) {
  return json{{"seq_threshold_3D", thr}, {"num_par_softmax_segments", segments}}.dump();
}

}  // namespace headroom::engine
