// Random GPU-lane cases (gpu_cases.hpp).
#include "tests/gpu/gpu_cases.hpp"
#include "tests/gpu/case_draw.hpp"

#include <algorithm>
#include <variant>

#include <cstring>

#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"
#include "kernels/elem_type.hpp"
#include "kernels/numeric.hpp"
#include "targets/sim/sim_launch.hpp"

namespace headroom::gpu_test {
namespace {

// FlashInfer's decode kernel supports these GQA group sizes (docs/engines.md §6).
constexpr int64_t fi_groups[] = {1, 2, 3, 4, 6, 8};

void make_triton(owned_case& c, draw& d, bool want_overflow) {
  engine_settings e;
  e.max_num_seqs = 4 + d.below(60);  // thr = 128 / KV snapped to a capture size <= 2 x max_num_seqs
  const int64_t kv = c.layer.num_kv_heads;
  const triton_plan p = plan_triton(c.builder_heads, kv, c.layer.head_size, triton_options{}, e);
  const int64_t thr = p.thr;
  // Overflow needs T * H_l > thr * H_b with T <= thr: draw T from the failing range.
  const int64_t lo = want_overflow ? thr * c.builder_heads / c.layer.num_heads + 1 : 1;
  const int64_t seqs = std::min(thr, lo + d.below(std::max<int64_t>(1, thr - lo + 1)));
  c.b = {};
  for (int64_t i = 0; i < seqs; ++i) {
    c.b.seq_lens.push_back(1 + d.below(d.below(4) == 0 ? 300 : 48));
    c.b.query_lens.push_back(1);
  }
  c.plan = p;
}

void make_fi(owned_case& c, draw& d) {
  flashinfer_options o;
  o.page_size = c.block_size;
  o.cuda_graph = d.below(4) == 0;
  const int64_t seqs = 1 + d.below(6);
  c.b = {};
  for (int64_t i = 0; i < seqs; ++i) {
    c.b.seq_lens.push_back(1 + d.below(d.below(2) == 0 ? 700 : 150));  // > 128 tokens: split-KV
    c.b.query_lens.push_back(1);
  }
  c.plan = plan_fi_decode(c.builder_heads, c.layer.num_kv_heads, c.layer.head_size, c.dt, c.b, o);
}

}  // namespace

const char* owned_case::backend() const {
  return std::holds_alternative<triton_plan>(plan) ? "triton" : "flashinfer";
}

std::string owned_case::describe() const {
  std::string s = "#";  // appended, not "#" + ...: g++ 12 warns (-Wrestrict) on that form
  s += std::to_string(index) + " " + backend() + " " + to_string(dt) +
       " H=" + std::to_string(layer.num_heads) + " Hb=" + std::to_string(builder_heads) +
       " KV=" + std::to_string(layer.num_kv_heads) + " D=" + std::to_string(layer.head_size) +
       " W=" + std::to_string(layer.sliding_window) + " bs=" + std::to_string(block_size) +
       " seqs=" + std::to_string(b.num_seqs()) + " seed=" + std::to_string(seed) + " kv=" + to_string(layout);
  if (!kind.empty()) s += " " + kind;
  return s;
}

owned_case random_case(uint64_t seed, uint64_t index, bool want_overflow) {
  draw d{splitmix64{seed * 0x9E3779B97F4A7C15ull + index}};
  owned_case c;
  const bool triton = d.below(2) == 0;
  draw_layer(c, d, index, [&] { return triton ? 1 + d.below(8) : d.pick(fi_groups); });
  const int64_t g = c.layer.num_heads / c.layer.num_kv_heads;
  for (int attempt = 0; attempt < 8; ++attempt) {
    c.builder_heads = c.layer.num_kv_heads * d.builder_group(g, want_overflow);
    if (triton)
      make_triton(c, d, want_overflow);
    else
      make_fi(c, d);
    model_executor model;
    c.model_overflow = !overflowing_buffers(c, model.run(c.request())).empty();
    if (c.model_overflow == want_overflow) break;
  }
  return c;
}

std::vector<std::string> overflowing_buffers(const owned_case& c, const observation& o) {
  const auto& bufs =
      std::visit([](const auto& p) -> const std::vector<buffer_plan>& { return p.buffers; }, c.plan);
  std::vector<std::string> out;
  for (const auto& t : o.touched) {
    const buffer_plan* b = find_buffer(bufs, t.name);
    if (b && t.elems > b->capacity_elems()) out.push_back(t.name);
  }
  return out;
}

namespace {
template <class T>
std::vector<float> sim_output_typed(const owned_case& c) {
  const auto host = make_attention_inputs<T>(c.layer, c.b, c.block_size, c.seed, c.layout);
  sim::memory m;
  const auto in = upload_inputs(m, host);
  run_checked(m, make_params(m, in, c.plan, c.layer, c.b));
  std::vector<float> out;
  for (const auto& x : m.download(in.output)) out.push_back(to_float(x));
  return out;
}
}  // namespace

std::vector<float> sim_output(const owned_case& c) {
  return with_elem_type(c.dt, "gpu lane", [&]<class T>() { return sim_output_typed<T>(c); });
}

namespace {
std::vector<float> planted_input(int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5f + static_cast<float>(i % 7);
  return v;
}
}  // namespace

gpu::gpu_request planted_request(const planted_case& p) {
  gpu::gpu_request rq;
  rq.fam = gpu::family::planted;
  rq.type = gpu::elem_type::f32;
  planted_params pp;
  pp.out = {nullptr, p.out_extent, 0};
  pp.in = {nullptr, p.in_extent, 1};
  pp.n_store = p.n_store, pp.n_load = p.n_load, pp.offset = p.offset;
  rq.params.resize(sizeof(pp));
  std::memcpy(rq.params.data(), &pp, sizeof(pp));
  rq.buffers.push_back({"out", 4, p.out_extent, true, {}});
  const auto in = planted_input(p.in_extent);
  gpu::wire_buffer b{"in", 4, p.in_extent, false, {}};
  b.data.resize(in.size() * sizeof(float));
  std::memcpy(b.data.data(), in.data(), b.data.size());
  rq.buffers.push_back(std::move(b));
  rq.download = 0;
  return rq;
}

sim::sim_log planted_on_sim(const planted_case& p) {
  sim::memory m;
  planted_params pp;
  pp.out = m.alloc<float>("out", p.out_extent, sim::fill::scratch);
  pp.in = m.upload("in", planted_input(p.in_extent));
  pp.n_store = p.n_store, pp.n_load = p.n_load, pp.offset = p.offset;
  sim::launch(m, planted_store{}, pp);
  return m.log;
}

}  // namespace headroom::gpu_test
