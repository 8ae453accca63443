// fa3_attention_inputs.hpp: the layer's FA3 attention call beside the scheduler's preparation.
#include "targets/engine/fa3_attention_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/util/error.hpp"
#include "kernels/inputs.hpp"
#include "kernels/reference.hpp"
#include "targets/sim/package.hpp"

namespace headroom::engine {
namespace {

using nlohmann::json;

// mha_fwd's call for the layer: the schedule's lengths and page size, the layer's heads and head
// sizes (from its q, k and v tensors) and its own window (FlashAttentionImpl.sliding_window).
fa3_call run_call_of(const fa3_plan& p, const rank_layer& l) {
  return fa3_layer_call(p.sched_call, l.num_heads, l.num_kv_heads, l.head_size,
                        std::max<int64_t>(l.sliding_window, 0), l.head_size_v);
}

template <class T>
int32_t add_input(gpu::gpu_request& rq, const char* name, const std::vector<T>& v) {
  gpu::wire_buffer w{name, static_cast<int64_t>(sizeof(T)), static_cast<int64_t>(v.size()), false, {}};
  w.data.resize(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(w.data.data(), v.data(), w.data.size());
  rq.buffers.push_back(std::move(w));
  return static_cast<int32_t>(rq.buffers.size() - 1);
}

int32_t add_scratch(gpu::gpu_request& rq, const char* name, int64_t elem_bytes, int64_t extent) {
  rq.buffers.push_back({name, elem_bytes, extent, true, {}});
  return static_cast<int32_t>(rq.buffers.size() - 1);
}

// vLLM's DiffKV cache, [pages][page][kv heads][d + dv] with K then V in a row (the NHD layout of
// FlashAttentionDiffKVBackend), from inputs whose V rows hold d values: each V row's first dv.
std::vector<bf16> diffkv_cache(const attention_inputs<bf16>& in, int64_t dv) {
  const int64_t d = in.head_size, stride = in.kv_row_stride(), row = d + dv;
  const bool packed = in.layout == kv_layout::packed;
  const bf16* k = packed ? in.kv_cache.data() : in.k_cache.data();
  const bf16* v = packed ? k + d : in.v_cache.data();
  const int64_t rows = static_cast<int64_t>(packed ? in.kv_cache.size() : in.k_cache.size()) / stride;
  std::vector<bf16> out(static_cast<std::size_t>(rows * row));
  for (int64_t r = 0; r < rows; ++r) {
    std::copy_n(k + r * stride, d, out.begin() + r * row);
    std::copy_n(v + r * stride, dv, out.begin() + r * row + d);
  }
  return out;
}

// The reference for V's first dv columns: each head's first dv outputs of the reference of d (an
// output column depends on its own column of V alone).
std::vector<float> first_columns(const std::vector<float>& ref, int64_t d, int64_t dv) {
  const auto n = static_cast<int64_t>(ref.size()) / d;
  std::vector<float> out(static_cast<std::size_t>(n * dv));
  for (int64_t i = 0; i < n; ++i) std::copy_n(ref.begin() + i * d, dv, out.begin() + i * dv);
  return out;
}

// The requests the inputs hold, when they are the plan's first rows and every later row of the
// plan is padding (no query token, no key: a graph replay's padded requests); else -1.
int64_t rows_held(const attention_inputs<bf16>& in, const fa3_plan& p) {
  const int64_t b = p.sched.batch, width = std::max<int64_t>(in.max_blocks_per_seq, 1);
  const int64_t held =
      std::min({static_cast<int64_t>(in.query_start.size()) - 1, static_cast<int64_t>(in.seq_lens.size()),
                static_cast<int64_t>(in.block_table.size()) / width, b});
  if (static_cast<int64_t>(p.query_start.size()) != b + 1 || static_cast<int64_t>(p.seq_lens.size()) < b ||
      held < 0)
    return -1;
  for (int64_t i = 0; i < b; ++i) {
    const bool same = i < held
                          ? in.seq_lens[i] == p.seq_lens[i] && in.query_start[i + 1] == p.query_start[i + 1]
                          : p.seq_lens[i] == 0 && p.query_start[i + 1] == p.query_start[i];
    if (!same || (i == 0 && in.query_start[0] != p.query_start[0])) return -1;
  }
  return held;
}

}  // namespace

std::string fa3_attention_unsupported(const run_request& r, const fa3_plan& p) {
  if (!r.layer || !r.b) return "no layer to run";
  const rank_layer& l = *r.layer;
  if (p.sched_call.build != fa3_build::vllm_fork) return "SGLang's schedule (sgl-attn is not built)";
  if (r.kv_dtype != dtype::bf16 || p.sched_call.e4m3) return "the driver builds FA3's bf16 kernels only";
  // The driver's instantiations run every head size mha_fwd accepts with head size v = head size,
  // and 192 / 128 (fa3_attention_run.cu), the cache read with or without TMA.
  if (std::string why = fa3_mha_fwd_refusal(l.num_heads, l.num_kv_heads, l.head_size, false, l.head_size_v);
      !why.empty())
    return "FA3's mha_fwd raises on the layer's call (" + why + ")";
  const fa3_call rc = run_call_of(p, l);
  if (fa3_head_size_v(rc) != l.head_size && !(l.head_size > 128 && l.head_size <= 192))
    return "the driver builds FA3's kernels of head size v = head size and 192 / 128 only";
  if (fa3_run_of(p, rc).size != p.sched.size())
    return "mha_fwd's CHECK_SHAPE refuses the scheduled metadata (a host check: plan_run_shape)";
  return {};
}

int64_t fa3_attach_attention(const run_request& r, const fa3_plan& p, gpu::gpu_request& rq,
                             std::vector<float>& reference) {
  if (!fa3_attention_unsupported(r, p).empty()) return r.layer->head_size;
  const rank_layer& l = *r.layer;
  attention_inputs<bf16> in;
  try {
    in = r.step ? make_step_inputs<bf16>(l, *r.step, r.max_num_seqs, r.table_width, r.block_size, r.seed,
                                         r.layout, input_values::host, engine_input_cap)
                : make_attention_inputs<bf16>(l, *r.b, r.block_size, r.seed, r.layout, input_values::host,
                                              engine_input_cap);
  } catch (const input_error&) {
    return l.head_size;  // past the arena image's cap: the scheduler alone runs
  }
  const int64_t held = in.consistent ? rows_held(in, p) : -1;
  if (held < 0) return l.head_size;
  const int64_t b = p.sched.batch, total_q = in.num_tokens(), h = l.num_heads, d = l.head_size;
  const fa3_call rc = run_call_of(p, l);
  const int64_t dv = fa3_head_size_v(rc);  // the layer's v tensor's
  const int64_t width = in.max_blocks_per_seq;
  const bool packed = in.layout == kv_layout::packed;
  const int64_t kv_elems = static_cast<int64_t>(packed ? in.kv_cache.size() : in.k_cache.size());
  const int64_t pages = kv_elems / (r.block_size * l.num_kv_heads * in.kv_row_stride());
  // vLLM's rows hold the null block 0 past a request's blocks, and padded requests' rows are all 0.
  std::vector<int32_t> table(static_cast<std::size_t>(b * width), 0);
  for (int64_t i = 0; i < held * width; ++i) table[i] = std::max(in.block_table[i], 0);
  const int64_t splits = fa3_run_splits(p, rc);
  const fa3_window_size window = fa3_window_size_of(rc.window);  // the layer's own
  // Each tensor as [buffer id, element offset]: the packed cache's K and V are views of one buffer,
  // V from element D (vLLM's key and value views since #44455); a DiffKV layer's cache is always
  // packed, D + DV to a row.
  const auto whole = [](int32_t id) { return json::array({id, 0}); };
  json ids = {{"q", whole(add_input(rq, "q", in.q))}};
  if (packed || dv != d) {
    const int32_t kv = add_input(rq, "kv_cache", dv != d ? diffkv_cache(in, dv) : in.kv_cache);
    ids["k_cache"] = whole(kv), ids["v_cache"] = json::array({kv, d});
  } else {
    ids["k_cache"] = whole(add_input(rq, "k_cache", in.k_cache));
    ids["v_cache"] = whole(add_input(rq, "v_cache", in.v_cache));
  }
  ids["block_table"] = whole(add_input(rq, "block_table", table));
  ids["output"] = whole(add_scratch(rq, output_buffer_name, 2, total_q * h * dv));
  ids["softmax_lse"] = whole(add_scratch(rq, "softmax_lse", 4, h * total_q));
  ids["out_accum"] = ids["softmax_lse_accum"] = json::array({-1, 0});
  if (splits > 1) {  // mha_fwd's [splits][h][total_q][dv] and [splits][h][total_q] floats
    ids["out_accum"] = whole(add_scratch(rq, "out_accum", 4, splits * h * total_q * dv));
    ids["softmax_lse_accum"] = whole(add_scratch(rq, "softmax_lse_accum", 4, splits * h * total_q));
  }
  rq.download = ids.at("output").at(0).get<int32_t>();
  json args = json::parse(rq.engine);
  args["fa3"]["attention"] = {{"num_heads", h},
                              {"num_heads_k", l.num_kv_heads},
                              {"headdim", d},
                              {"headdim_v", dv},
                              {"window_left", window.left},
                              {"window_right", window.right},
                              {"num_splits", p.run_splits},
                              {"total_q", total_q},
                              {"num_pages", pages},
                              {"pages_per_seq", width},
                              {"kv_row_stride", dv != d ? d + dv : in.kv_row_stride()},
                              {"softmax_scale", 1.0 / std::sqrt(static_cast<double>(d))},
                              {"expect", {{"num_splits", splits}}},
                              {"ids", ids}};
  rq.engine = args.dump();
  reference = attention_reference(in);
  reference.resize(static_cast<std::size_t>(covered_output(in)));
  if (dv != d) reference = first_columns(reference, d, dv);
  return dv;
}

json fa3_attention_launch(const json& attention, const gpu::gpu_request& rq, const engine_arena& a) {
  json out = attention;
  json at = json::object();
  for (const auto& [name, ref] : attention.at("ids").items())
    at[name] =
        arena_offset(rq, a, ref.at(0).get<int32_t>(), ref.at(1).get<int64_t>(), "fa3 attention launch");
  out.erase("ids");
  out["at"] = at;
  return out;
}

}  // namespace headroom::engine
